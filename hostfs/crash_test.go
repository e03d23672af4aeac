package hostfs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/semfs/semfs"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv("HOSTFS_CRASH_WRITER"); dir != "" {
		crashWriter(dir)
	}
	os.Exit(m.Run())
}

const crashSize = 4 << 20

// crashWriter rewrites /f in dir with alternating 4 MiB payloads until it
// is killed. It says "ready" once the first write is complete.
func crashWriter(dir string) {
	f, err := Open(dir, ReadWrite)
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	payloads := [2][]byte{bytes.Repeat([]byte{'a'}, crashSize), bytes.Repeat([]byte{'b'}, crashSize)}
	for i := 0; ; i++ {
		if err := f.WriteFile(ctx, "/f", payloads[i%2], 0o644); err != nil {
			fmt.Println(err)
			os.Exit(2)
		}
		if i == 0 {
			fmt.Println("ready")
		}
	}
}

// TestWriteFileSurvivesKill kills a process in the middle of rewriting a
// file, again and again, and checks that the file always holds one whole
// version and that leftover temporary files stay out of the tree. It goes
// on until at least two kills have landed inside a write (each leaves a
// temporary file), so it cannot pass without testing the crash window.
func TestWriteFileSurvivesKill(t *testing.T) {
	dir := t.TempDir()
	var ents []os.DirEntry
	for round := 0; len(ents) < 3; round++ {
		if round == 30 {
			t.Fatalf("after %d kills only %d landed inside a write", round, len(ents)-1)
		}
		cmd := exec.Command(os.Args[0], "-test.run", "^$")
		cmd.Env = append(os.Environ(), "HOSTFS_CRASH_WRITER="+dir)
		out, err := cmd.StdoutPipe()
		must(t, err)
		must(t, cmd.Start())
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || line != "ready\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("writer did not start: %q %v", line, err)
		}
		time.Sleep(time.Duration(20+round%4*37) * time.Millisecond)
		must(t, cmd.Process.Kill())
		cmd.Wait()

		data, err := os.ReadFile(filepath.Join(dir, "f"))
		must(t, err)
		if len(data) != crashSize || (bytes.Count(data, data[:1]) != crashSize) {
			t.Fatalf("round %d: /f holds %d bytes, not one whole version", round, len(data))
		}
		ents, err = os.ReadDir(dir)
		must(t, err)
	}
	f := open(t, dir, ReadOnly)
	if got := names(t, f, "/"); !slices.Equal(got, []string{"f"}) {
		t.Errorf("tree after crashes lists %v", got)
	}
	rw := open(t, dir, ReadWrite)
	n, err := rw.SweepTemp(ctx, 0)
	must(t, err)
	if left, _ := os.ReadDir(dir); n != len(ents)-1 || len(left) != 1 {
		t.Errorf("SweepTemp removed %d of %d leftovers; %d entries remain", n, len(ents)-1, len(left))
	}
}

func TestSweepTemp(t *testing.T) {
	dir := seedDir(t, map[string]string{
		"/keep.txt":                    "k",
		"/d/" + tmpPrefix + "old":      "partial",
		"/d/e/" + tmpPrefix + "old2":   "partial",
		"/d/" + tmpPrefix + "fresh":    "in flight",
		"/.semfs/" + tmpPrefix + "idx": "bookkeeping",
	})
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{"d/" + tmpPrefix + "old", "d/e/" + tmpPrefix + "old2", ".semfs/" + tmpPrefix + "idx"} {
		must(t, os.Chtimes(filepath.Join(dir, p), old, old))
	}
	ro := open(t, dir, ReadOnly)
	if _, err := ro.SweepTemp(ctx, time.Minute); !errors.Is(err, semfs.ErrReadOnly) {
		t.Errorf("SweepTemp on a ReadOnly tree: %v", err)
	}
	ov := open(t, dir, Overlay)
	if _, err := ov.SweepTemp(ctx, time.Minute); !errors.Is(err, semfs.ErrInvalid) {
		t.Errorf("SweepTemp on an Overlay tree: %v", err)
	}
	f := open(t, dir, ReadWrite)
	n, err := f.SweepTemp(ctx, time.Minute)
	must(t, err)
	if n != 2 {
		t.Errorf("removed %d, want 2", n)
	}
	got := hostFiles(t, dir)
	want := map[string]string{"/keep.txt": "k", "/d/" + tmpPrefix + "fresh": "in flight", "/.semfs/" + tmpPrefix + "idx": "bookkeeping"}
	if !mapsEqual(got, want) {
		t.Errorf("after sweep: %v, want %v", got, want)
	}
}
