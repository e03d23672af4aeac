package daemon_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/daemon"
)

// TestSnapshotDuringWrites takes a snapshot through the socket while a
// stream of writes runs, restores it into a fresh directory, boots a daemon
// there and compares bytes, tags and query results; then checks that a
// corrupted archive is refused without touching the target.
func TestSnapshotDuringWrites(t *testing.T) {
	ctx := context.Background()
	sock, _ := headless(t)
	c := client.New(sock)
	defer c.Close()
	fsys := c.FS()
	pre := map[string]string{}
	for i := range 12 {
		p := fmt.Sprintf("/pre/report-%02d.md", i)
		data := fmt.Sprintf("report %d\n%s", i, strings.Repeat("line of text\n", i))
		if err := semfs.WriteFile(ctx, fsys, p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := c.Tag(ctx, p, semfs.Tags{Task: fmt.Sprintf("quarterly-audit-%02d", i), RelatedApps: []string{"ledger"}}); err != nil {
			t.Fatal(err)
		}
		pre[p] = data
	}
	stream := func(i int) string { return fmt.Sprintf("stream %d %s", i, strings.Repeat("z", i*37%2000)) }
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	var written int
	started := make(chan struct{})
	var startOnce sync.Once
	go func() {
		defer wg.Done()
		defer startOnce.Do(func() { close(started) })
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := semfs.WriteFile(ctx, fsys, fmt.Sprintf("/stream/s%05d", i), []byte(stream(i)), 0o644); err != nil {
				t.Errorf("stream write: %v", err)
				return
			}
			written = i + 1
			if written == 20 {
				startOnce.Do(func() { close(started) })
			}
		}
	}()
	<-started // the snapshot starts while the stream is running
	out := filepath.Join(t.TempDir(), "tree.semfs")
	res, err := c.Snapshot(ctx, out)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if res.Files < len(pre) {
		t.Fatalf("snapshot holds %d files, want at least %d", res.Files, len(pre))
	}
	t.Logf("snapshot: %d files, %d bytes, while %d stream files were written", res.Files, res.Bytes, written)

	fresh := t.TempDir()
	man, err := daemon.RestoreSnapshot(ctx, out, filepath.Join(fresh, "data"), filepath.Join(fresh, "index", "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	sock2, _ := headlessAt(t, fresh)
	c2 := client.New(sock2)
	defer c2.Close()
	fs2 := c2.FS()
	for p, data := range pre {
		got, err := semfs.ReadFile(ctx, fs2, p)
		if err != nil || string(got) != data {
			t.Errorf("restored %s = %q, %v", p, got, err)
		}
		m1, err1 := c.Stat(ctx, p)
		m2, err2 := c2.Stat(ctx, p)
		if err1 != nil || err2 != nil || m1.Meta == nil || m2.Meta == nil ||
			m1.Meta.Task != m2.Meta.Task || m2.Meta.Task == "" || m1.Meta.CreatedBy != m2.Meta.CreatedBy || m1.Meta.Hash != m2.Meta.Hash {
			t.Errorf("restored metadata of %s = %+v (%v); original %+v (%v)", p, m2.Meta, err2, m1.Meta, err1)
		}
	}
	streamed := 0
	for _, p := range man.SnapshotPaths() {
		var i int
		if _, err := fmt.Sscanf(p, "/stream/s%05d", &i); err != nil {
			continue
		}
		streamed++
		got, err := semfs.ReadFile(ctx, fs2, p)
		if err != nil || string(got) != stream(i) {
			t.Errorf("restored stream file %s torn or missing: %d bytes, %v", p, len(got), err)
		}
	}
	t.Logf("%d stream files captured", streamed)
	for _, q := range []string{"quarterly audit 07", "ledger", "report-03"} {
		r1, err1 := c.Query(ctx, q, 3)
		r2, err2 := c2.Query(ctx, q, 3)
		if err1 != nil || err2 != nil || len(r1) == 0 || len(r2) == 0 || r1[0].Path != r2[0].Path {
			t.Errorf("query %q: original %v (%v), restored %v (%v)", q, paths(r1), err1, paths(r2), err2)
		}
	}

	// A corrupted archive is refused and the target is left alone.
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(raw)
	bad[len(bad)/2] ^= 0xff
	badPath := filepath.Join(t.TempDir(), "bad.semfs")
	os.WriteFile(badPath, bad, 0o644)
	target := t.TempDir()
	os.MkdirAll(filepath.Join(target, "data"), 0o755)
	os.WriteFile(filepath.Join(target, "data", "keep.txt"), []byte("keep"), 0o644)
	if _, err := daemon.RestoreSnapshot(ctx, badPath, filepath.Join(target, "data"), filepath.Join(target, "index.db")); err == nil {
		t.Error("restore of a corrupted archive succeeded")
	}
	if got, err := os.ReadFile(filepath.Join(target, "data", "keep.txt")); err != nil || string(got) != "keep" {
		t.Errorf("a refused restore changed the target: %q, %v", got, err)
	}
}

func paths(rs []semfs.QueryResult) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Path)
	}
	return out
}
