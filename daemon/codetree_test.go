package daemon_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/daemon"
	"github.com/semfs/semfs/index/sqlite"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/meta"
)

// TestCodeTreeRetag: on a mount of a tree given in code (Main.Tree), a tag
// change over the socket that hides a file drops the kernel's name for it
// before the call returns, as on the daemon's own tree.
func TestCodeTreeRetag(t *testing.T) {
	needFUSE(t)
	ctx := context.Background()
	dir := t.TempDir()
	ix, err := sqlite.Open(ctx, filepath.Join(dir, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := meta.New(memfs.New(), ix, meta.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tree.Close(); ix.Close() })
	os.WriteFile(dir+"/tokens.json", []byte(accessTokens), 0o600)
	mnt := filepath.Join(dir, "mnt")
	cfg, err := daemon.ParseConfig([]string{"-mode", "mount", "-mount", mnt, "-drop-caps=false", "-data", dir + "/data",
		"-socket", dir + "/semfs.sock", "-tokens", dir + "/tokens.json"}, func(string) string { return "" }, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	d := &daemon.Main{Config: cfg, Tree: tree, Logger: slog.New(slog.DiscardHandler)}
	if err := d.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	c := client.New(cfg.Socket)
	defer c.Close()
	os.MkdirAll(mnt+"/r", 0o755)
	os.WriteFile(mnt+"/r/pub.txt", []byte("p"), 0o644)
	if err := os.WriteFile(mnt+"/r/f.txt", []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := os.Stat(mnt + "/r/f.txt"); err != nil { // cached while public
			t.Fatal(err)
		}
	}
	if err := c.Tag(ctx, "/r/f.txt", semfs.Tags{Groups: []string{"finance"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mnt + "/r/f.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat of a file just hidden from this caller = %v; want ENOENT (the kernel kept its name)", err)
	}
}
