package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(c.xs); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	in := strings.Join([]string{
		"ls\tnative\t10000000\t10000000",
		"ls\tsemfs\t30000000\t10000000",
		"ls\tnative\t20000000\t20000000",
		"ls\tsemfs\t20000000\t20000000",
		"ls\tnative\t40000000\t40000000",
		"ls\tsemfs\t100000000\t40000000",
		"create\tnative\t2000000000\t2000000000",
	}, "\n")
	var out bytes.Buffer
	if err := summarize(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	want := "| workload | native | semfs |\n|---|---|---|\n" +
		"| ls | 20.0 ms (n=3) | 30.0 ms; **2.50×** (3.00, 1.00, 2.50) |\n" +
		"| create | 2.00 s (n=1) | |\n"
	if out.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", out.String(), want)
	}
	for _, bad := range []string{"ls\tnative\t10", "ls\tnative\tten\t10", "ls\tnative\t0\t0"} {
		if err := summarize(strings.NewReader(bad), &out); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("summarize(%q) = %v, want an error naming line 1", bad, err)
		}
	}
}

func TestCountsString(t *testing.T) {
	var c counts
	if c.String() != "none" {
		t.Errorf("no requests: %q", c.String())
	}
	c[opRead], c[opLookup], c[opOpen] = 9, 7, 5
	earlier := counts{}
	earlier[opLookup] = 2
	d := c.sub(earlier)
	// Most first; ties in the order of the opcodes.
	if got, want := d.String(), "READ 9, LOOKUP 5, OPEN 5"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if d.total() != 19 {
		t.Errorf("total = %d, want 19", d.total())
	}
}

// mountForTest mounts a reference server under t's temporary directory,
// or skips the test where no FUSE mount can be made.
func mountForTest(t *testing.T, backing bool, kind refKind) (mnt, data string, reqs *counter) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("skipping: /dev/fuse is missing, so no FUSE mount can be made here")
	}
	dir := t.TempDir()
	mnt = filepath.Join(dir, "mnt")
	if backing {
		data = filepath.Join(dir, "data")
		if err := os.Mkdir(data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	reqs = &counter{}
	stop, err := mountRef(mnt, data, kind, reqs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return mnt, data, reqs
}

// TestLoopbackSides checks the two loopback reference servers: files
// written through them land in the backing directory, files written there
// read back through them, and the generous one reads them without OPEN
// requests (the first is answered ENOSYS) while the other opens each.
func TestLoopbackSides(t *testing.T) {
	for _, kind := range []refKind{refLoopback, refGenerous} {
		mnt, data, reqs := mountForTest(t, true, kind)
		if err := os.Mkdir(filepath.Join(mnt, "d"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mnt, "d", "written"), []byte("through the mount"), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(filepath.Join(data, "d", "written")); err != nil || string(b) != "through the mount" {
			t.Errorf("kind %d: backing file = %q, %v", kind, b, err)
		}
		for _, name := range []string{"a", "b", "c"} {
			if err := os.WriteFile(filepath.Join(data, "d", name), []byte("host "+name), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		c0 := reqs.snapshot()
		for _, name := range []string{"a", "b", "c"} {
			b, err := os.ReadFile(filepath.Join(mnt, "d", name))
			if err != nil || string(b) != "host "+name {
				t.Errorf("kind %d: reading %s through the mount = %q, %v", kind, name, b, err)
			}
		}
		got := reqs.snapshot().sub(c0)
		if kind == refLoopback && got[opOpen] != 3 {
			t.Errorf("loopback: %d OPEN requests for 3 files read, want 3 (%v)", got[opOpen], got)
		}
		if kind == refGenerous && (got[opOpen] > 1 || got[opRead] < 2) {
			t.Errorf("generous: %d OPEN and %d READ requests for 3 files read, want at most 1 OPEN and a READ each (%v)", got[opOpen], got[opRead], got)
		}
		if got[opFlush] > 1 {
			t.Errorf("kind %d: %d FLUSH requests after the first was declined (%v)", kind, got[opFlush], got)
		}
	}
}

// TestMemorySide checks the in-memory server: what is written reads back
// and lists, and the round trip measured on it is one request per stat.
func TestMemorySide(t *testing.T) {
	for _, kind := range []refKind{refGenerous, refPlain} {
		testMemorySide(t, kind)
	}
	fuseP50, nativeP50, per, err := roundTrip(filepath.Join(t.TempDir(), "rt"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if per < 0.99 || per > 1.01 || fuseP50 <= 0 || nativeP50 <= 0 {
		t.Errorf("round trip: p50 %v (native %v), %.3f requests per stat; want one each", fuseP50, nativeP50, per)
	}
}

func testMemorySide(t *testing.T, kind refKind) {
	mnt, _, reqs := mountForTest(t, false, kind)
	if err := os.MkdirAll(filepath.Join(mnt, "d", "e"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mnt, "d", "e", "f"), []byte("in memory"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(mnt, "d", "e", "f")); err != nil || string(b) != "in memory" {
		t.Errorf("read back %q, %v", b, err)
	}
	es, err := os.ReadDir(filepath.Join(mnt, "d"))
	if err != nil || len(es) != 1 || es[0].Name() != "e" || !es[0].IsDir() {
		t.Errorf("listing d: %v, %v", es, err)
	}
	got := reqs.snapshot()
	if got[opCreate] != 1 || got[opMkdir] != 2 {
		t.Errorf("requests %v: want 1 CREATE and 2 MKDIR", got)
	}
	if plain := got[opReaddirplus] == 0 && got[opReaddir] > 0; plain != (kind == refPlain) {
		t.Errorf("kind %d: listing sent %v", kind, got)
	}
	// The kernel keeps the listing: a second one sends no READDIRPLUS.
	c0 := reqs.snapshot()
	if es, err := os.ReadDir(filepath.Join(mnt, "d")); err != nil || len(es) != 1 {
		t.Errorf("listing d again: %v, %v", es, err)
	}
	if got := reqs.snapshot().sub(c0); got[opReaddirplus]+got[opReaddir] != 0 {
		t.Errorf("listing d again sent %v, want no READDIR(PLUS): the listing is kept", got)
	}

}
