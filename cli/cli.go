// Package cli is the semfs command line: one cobra command tree whose
// subcommands are thin over the library packages. Each subcommand lives in
// its own file and registers itself with Register from an init function;
// cmd/semfs's main only calls Run.
//
// Exit codes are stable (see ExitCode) and errors are written for a person:
// what failed, and what to do next.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/semfs/semfs"
)

// App is the state shared by all subcommands of one invocation.
type App struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer

	// Global flags.
	JSON    bool   // --json: print data as JSON
	Root    string // --root: host directory of the tree (SEMFS_DATA)
	Index   string // --index: index database (SEMFS_INDEX)
	Verbose bool   // --verbose
	// ConfigPath is --config: the configuration file (see semfs config).
	ConfigPath string

	closers    []func() error
	configPath string            // the configuration file read, once loaded
	fileValues map[string]string // its values by key, once loaded
}

// OnClose registers fn to run when the command finishes.
func (a *App) OnClose(fn func() error) { a.closers = append(a.closers, fn) }

// PrintJSON writes v as indented JSON followed by a newline.
func (a *App) PrintJSON(v any) error {
	enc := json.NewEncoder(a.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

var (
	regMu    sync.Mutex
	registry = map[string]func(*App) *cobra.Command{}
)

// Register adds a subcommand. name must be unique; build returns the command
// for one invocation (it may capture app).
func Register(name string, build func(app *App) *cobra.Command) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("cli: duplicate command " + name)
	}
	registry[name] = build
}

// Exit codes. They are part of the CLI's contract: scripts may rely on them.
const (
	ExitOK          = 0
	ExitFailure     = 1  // anything not listed below (I/O error, internal error)
	ExitUsage       = 2  // bad flags or arguments
	ExitNotExist    = 3  // no such file or directory
	ExitPermission  = 4  // refused by the access policy
	ExitExist       = 5  // already exists
	ExitInvalid     = 6  // invalid path or argument
	ExitReadOnly    = 7  // read-only tree or mount
	ExitQuota       = 8  // quota exceeded
	ExitNotDir      = 9  // a path component is a file
	ExitIsDir       = 10 // a file operation on a directory
	ExitNotEmpty    = 11 // directory not empty
	ExitUnavailable = 12 // the daemon, database or object store cannot be reached
)

// exitCodes is the one table mapping the contract's sentinels to exit codes.
var exitCodes = map[error]int{
	semfs.ErrNotExist:   ExitNotExist,
	semfs.ErrPermission: ExitPermission,
	semfs.ErrExist:      ExitExist,
	semfs.ErrInvalid:    ExitInvalid,
	semfs.ErrReadOnly:   ExitReadOnly,
	semfs.ErrQuota:      ExitQuota,
	semfs.ErrNotDir:     ExitNotDir,
	semfs.ErrIsDir:      ExitIsDir,
	semfs.ErrNotEmpty:   ExitNotEmpty,
}

// UsageError marks an error as a usage error (exit code 2).
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError with a formatted message.
func Usagef(format string, args ...any) error { return UsageError{fmt.Errorf(format, args...)} }

// UnavailableError marks an error as "a service could not be reached" (exit 12).
type UnavailableError struct{ Err error }

func (e UnavailableError) Error() string { return e.Err.Error() }
func (e UnavailableError) Unwrap() error { return e.Err }

// ExitCode maps an error to the CLI's exit code.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ue UsageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	var un UnavailableError
	if errors.As(err, &un) {
		return ExitUnavailable
	}
	if s := semfs.Sentinel(err); s != nil {
		return exitCodes[s]
	}
	return ExitFailure
}

// NewRoot builds the command tree for one invocation.
func NewRoot(app *App) *cobra.Command {
	root := &cobra.Command{
		Use:   "semfs",
		Short: "A semantic filesystem for AI agents",
		Long: `semfs keeps the files of agents and apps in one shared tree. Every file can
carry tags about why it exists (created_by, task, related apps, summary, links),
and anything in the tree can be found again by meaning, by keyword, by tag, or
with ls, cat, grep and find.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(app.Stdin)
	root.SetOut(app.Stdout)
	root.SetErr(app.Stderr)
	pf := root.PersistentFlags()
	pf.BoolVar(&app.JSON, "json", false, "print results as JSON")
	pf.StringVar(&app.Root, "root", envOr("SEMFS_DATA", "."), "host directory holding the tree's files (env SEMFS_DATA)")
	pf.StringVar(&app.Index, "index", envOr("SEMFS_INDEX", ""), "index database: a SQLite file or a postgres:// URL (env SEMFS_INDEX; default ROOT/.semfs/index.db)")
	pf.BoolVarP(&app.Verbose, "verbose", "v", false, "log what semfs is doing to stderr")
	pf.StringVar(&app.ConfigPath, "config", "", "configuration file (env SEMFS_CONFIG; default $XDG_CONFIG_HOME/semfs/semfs.toml, then /etc/semfs/semfs.toml); see 'semfs config'")
	// Flags left unset take their value from the environment, then the
	// configuration file (config.go).
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error { return app.applyConfig(cmd) }
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return UsageError{fmt.Errorf("%w\nRun '%s --help' for usage.", err, c.CommandPath())}
	})

	regMu.Lock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	builders := make([]func(*App) *cobra.Command, 0, len(names))
	for _, n := range names {
		builders = append(builders, registry[n])
	}
	regMu.Unlock()
	for _, b := range builders {
		root.AddCommand(b(app))
	}
	return root
}

// Run runs the semfs command line with args (without the program name) and
// returns the exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := &App{Stdin: stdin, Stdout: stdout, Stderr: stderr}
	root := NewRoot(app)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	for i := len(app.closers) - 1; i >= 0; i-- {
		if cerr := app.closers[i](); cerr != nil && err == nil {
			err = cerr
		}
	}
	if err != nil {
		// A script run by `semfs sh` exits with its own status; the shell
		// already printed whatever the script had to say.
		var st interface{ ExitStatus() int }
		if errors.As(err, &st) {
			return st.ExitStatus()
		}
		fmt.Fprintf(stderr, "semfs: %v\n", err)
		// cobra reports unknown commands and missing args as plain errors.
		if ExitCode(err) == ExitFailure && isCobraUsage(err) {
			return ExitUsage
		}
		return ExitCode(err)
	}
	return ExitOK
}

func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, s := range []string{"unknown command", "unknown flag", "accepts ", "requires at least", "requires at most", "invalid argument"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func envOr(key, def string) string {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		return v
	}
	return def
}
