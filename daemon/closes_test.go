package daemon_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/daemon"
	"github.com/semfs/semfs/meta"
)

// TestCrashKeepsPendingClosesWriters kills the daemon with SIGKILL while
// the rows of closed files are still deferred (a long SEMFS_CLOSE_DELAY
// keeps them pending), and checks that after a restart each file is
// indexed with its registered writer as created_by — kept by the journal
// of pending closes beside the index — not as written by an unknown one.
func TestCrashKeepsPendingClosesWriters(t *testing.T) {
	needFUSE(t)
	dir := t.TempDir()
	p := startDaemon(t, dir, "SEMFS_CLOSE_DELAY=10m")
	ctx := context.Background()
	if err := p.c.Register(ctx, "journaler"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(p.mnt, "pending"), 0o755); err != nil {
		t.Fatal(err)
	}
	const n = 20
	content := func(i int) []byte { return []byte(fmt.Sprintf("pending close %d\n", i)) }
	var want []string
	for i := range n {
		name := fmt.Sprintf("/pending/p%02d.txt", i)
		if err := os.WriteFile(filepath.Join(p.mnt, name), content(i), 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	// The kernel sends RELEASE after close(2) returns: wait until the
	// daemon has journaled every close (and so not stored any yet).
	journal := filepath.Join(dir, "index", "index.db-closes")
	deadline := time.Now().Add(20 * time.Second)
	for {
		data, _ := os.ReadFile(journal)
		missing := 0
		for _, name := range want {
			if !strings.Contains(string(data), strconv.Quote(name)) {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d closes not in the journal %s after 20s:\n%s\ndaemon log:\n%s", missing, n, journal, data, p.log())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.done

	p2 := startDaemon(t, dir)
	for i, name := range want {
		sum := sha256.Sum256(content(i))
		st, err := p2.c.Stat(ctx, name)
		if err != nil || st.Meta == nil {
			t.Fatalf("stat %s after the crash: %+v, %v", name, st, err)
		}
		if st.Meta.CreatedBy != "journaler" || st.Meta.Hash != hex.EncodeToString(sum[:]) {
			t.Errorf("%s after the crash: created_by %q, hash %s; want journaler, %x", name, st.Meta.CreatedBy, st.Meta.Hash, sum)
		}
	}
	if data, err := os.ReadFile(journal); err != nil || len(data) != 0 {
		t.Errorf("journal after the restart stored its closes: %d bytes, %v; want empty", len(data), err)
	}
}

// TestCloseDelayConfig: SEMFS_CLOSE_DELAY and -close-delay set the delay
// (flags win), 0 turns deferral off, and a bad value is refused with the
// setting's name.
func TestCloseDelayConfig(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	cases := []struct {
		env  []string
		args []string
		want time.Duration
		err  string
	}{
		{want: meta.DefaultCloseDelay},
		{env: []string{"SEMFS_CLOSE_DELAY", "250ms"}, want: 250 * time.Millisecond},
		{env: []string{"SEMFS_CLOSE_DELAY", "0"}, want: 0},
		{env: []string{"SEMFS_CLOSE_DELAY", "250ms"}, args: []string{"-close-delay", "1s"}, want: time.Second},
		{env: []string{"SEMFS_CLOSE_DELAY", "soon"}, err: "SEMFS_CLOSE_DELAY"},
		{env: []string{"SEMFS_CLOSE_DELAY", "-1s"}, err: "SEMFS_CLOSE_DELAY"},
		{args: []string{"-close-delay", "-5ms"}, err: "-close-delay"},
	}
	for _, c := range cases {
		cfg, err := daemon.ParseConfig(c.args, env(c.env...), io.Discard)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v %v: error %v; want one naming %s", c.env, c.args, err, c.err)
			}
			continue
		}
		if err != nil || cfg.CloseDelay != c.want {
			t.Errorf("%v %v: CloseDelay %v, %v; want %v", c.env, c.args, cfg.CloseDelay, err, c.want)
		}
	}
}

// TestDoctorFlushesDeferredCloses: the doctor counts the files written
// through the mount whose rows a long SEMFS_CLOSE_DELAY still defers.
func TestDoctorFlushesDeferredCloses(t *testing.T) {
	needFUSE(t)
	dir := t.TempDir()
	p := startDaemon(t, dir, "SEMFS_CLOSE_DELAY=10m")
	ctx := context.Background()
	if err := os.Mkdir(filepath.Join(p.mnt, "doc"), 0o755); err != nil {
		t.Fatal(err)
	}
	const n = 7
	for i := range n {
		if err := os.WriteFile(filepath.Join(p.mnt, "doc", fmt.Sprintf("d%d.txt", i)), []byte("doctor\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The kernel sends RELEASE after close(2) returns: wait until every
	// close is journalled, so that none was stored by its own close.
	journal := filepath.Join(dir, "index", "index.db-closes")
	deadline := time.Now().Add(20 * time.Second)
	for {
		data, _ := os.ReadFile(journal)
		if strings.Count(string(data), "\n") >= n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("closes not journalled after 20s:\n%s", data)
		}
		time.Sleep(10 * time.Millisecond)
	}
	doc, err := p.c.Doctor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range doc.Checks {
		if c.Name == "index" {
			found = true
			if !c.OK || !strings.HasPrefix(c.Detail, fmt.Sprintf("%d files,", n)) {
				t.Errorf("doctor's index check %+v; want the %d files written", c, n)
			}
		}
	}
	if !found {
		t.Fatalf("no index check in %+v", doc.Checks)
	}
}
