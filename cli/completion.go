package cli

import (
	"github.com/spf13/cobra"
)

func init() { Register("completion", newCompletion) }

func newCompletion(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print a shell completion script for semfs",
		Long: `Print a script that makes your shell complete semfs's commands and flags.

  bash:        source <(semfs completion bash)
               or: semfs completion bash > /etc/bash_completion.d/semfs
  zsh:         semfs completion zsh > "${fpath[1]}/_semfs"
  fish:        semfs completion fish > ~/.config/fish/completions/semfs.fish
  powershell:  semfs completion powershell | Out-String | Invoke-Expression`,
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		Args:      cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(app.Stdout, true)
			case "zsh":
				return root.GenZshCompletion(app.Stdout)
			case "fish":
				return root.GenFishCompletion(app.Stdout, true)
			default:
				return root.GenPowerShellCompletionWithDesc(app.Stdout)
			}
		},
	}
}
