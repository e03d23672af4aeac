package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/semfs/semfs/docfs/sqlstore"
	"github.com/semfs/semfs/embedding/models"
	"github.com/semfs/semfs/index/postgres"
	"github.com/semfs/semfs/index/sqlite"
)

// Version is the semfs release, set at build time with
// -ldflags "-X github.com/semfs/semfs/cli.Version=v1.2.3"; otherwise the
// module version or VCS revision the binary was built from.
var Version = ""

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			return bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "dev-" + s.Value[:12]
			}
		}
	}
	return "dev"
}

func init() { Register("version", newVersion) }

// VersionInfo is what `semfs version --json` prints.
type VersionInfo struct {
	Version string            `json:"version"`
	Go      string            `json:"go"`
	Schemas map[string]int    `json:"schemas"`
	Models  map[string]string `json:"models"`
}

func newVersion(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the semfs version, its index schema versions and its compiled-in models",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := VersionInfo{Version: version(), Go: runtime.Version(), Models: map[string]string{},
				Schemas: map[string]int{
					"sqlite":           sqlite.SchemaVersion,
					"sqlite-derived":   sqlite.DerivedVersion,
					"postgres":         postgres.SchemaVersion,
					"postgres-derived": postgres.DerivedVersion,
					"docs":             sqlstore.SchemaVersion,
				}}
			spaces, err := models.Default()
			if err != nil {
				return fmt.Errorf("loading the embedding models: %w", err)
			}
			if spaces.Tags != nil {
				i := spaces.Tags.Info()
				v.Models["tags"] = fmt.Sprintf("%s %s (%d dims, weights %.12s)", i.Name, i.Version, i.Dims, i.WeightsSHA256)
			}
			if spaces.Content != nil {
				i := spaces.Content.Info()
				v.Models["content"] = fmt.Sprintf("%s %s (%d dims, weights %.12s)", i.Name, i.Version, i.Dims, i.WeightsSHA256)
			}
			if app.JSON {
				return app.PrintJSON(v)
			}
			fmt.Fprintf(app.Stdout, "semfs %s (%s)\n", v.Version, v.Go)
			fmt.Fprintf(app.Stdout, "index schema: sqlite %d (derived %d), postgres %d (derived %d); docs %d\n",
				sqlite.SchemaVersion, sqlite.DerivedVersion, postgres.SchemaVersion, postgres.DerivedVersion, sqlstore.SchemaVersion)
			fmt.Fprintf(app.Stdout, "model, tags:    %s\nmodel, content: %s\n", v.Models["tags"], v.Models["content"])
			return nil
		},
	}
}
