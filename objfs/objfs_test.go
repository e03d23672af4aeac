package objfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/internal/testserver"
	"github.com/semfs/semfs/semfstest"
)

var bucketSeq atomic.Int64

// newStore starts one versitygw for the test and returns a factory of
// fresh, empty trees (each in its own bucket).
func newStore(t *testing.T) (*testserver.S3, func(t *testing.T, prefix string) *FS) {
	s3 := testserver.StartS3(t)
	return s3, func(t *testing.T, prefix string) *FS {
		cfg := Config{
			Endpoint: s3.Endpoint, AccessKey: s3.AccessKey, SecretKey: s3.SecretKey,
			Bucket: fmt.Sprintf("bucket-%d", bucketSeq.Add(1)), Prefix: prefix, CreateBucket: true,
			CacheBytes: 1 << 20, PartSize: 5 << 20, SpoolDir: t.TempDir(),
		}
		f, err := Open(context.Background(), cfg)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return f
	}
}

func TestConformance(t *testing.T) {
	_, open := newStore(t)
	semfstest.Run(t, func(t *testing.T) semfs.FS { return open(t, "") }, semfstest.Writers(4))
}

func TestConformanceWithPrefix(t *testing.T) {
	_, open := newStore(t)
	// A short prefix: the suite's deepest path is 1017 bytes and S3 keys
	// stop at 1024 (TestKeyTooLong checks the error past that).
	semfstest.Run(t, func(t *testing.T) semfs.FS { return open(t, "t/") }, semfstest.Writers(2))
}

func TestKeyTooLong(t *testing.T) {
	_, open := newStore(t)
	ctx := context.Background()
	f := open(t, "tenant/")
	long := "/" + strings.Repeat("d/", 508) + "file" // 1021 bytes: fits the tree, not the key
	err := semfs.WriteFile(ctx, f, long, []byte("x"), 0o644)
	if !errors.Is(err, semfs.ErrInvalid) || !strings.Contains(err.Error(), "S3 keys are limited to 1024 bytes") {
		t.Fatalf("WriteFile of an over-long key: %v", err)
	}
	if entries, _ := f.ReadDir(ctx, "/"); len(entries) != 0 {
		t.Fatalf("tree changed by a refused write: %v", entries)
	}
	if err := f.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if entries, _ := f.ReadDir(ctx, "/"); len(entries) != 0 {
		t.Fatalf("bucket changed by a refused write: %v", entries)
	}
}

func TestIndexSurvivesReopenAndSeesOtherWriters(t *testing.T) {
	s3, open := newStore(t)
	ctx := context.Background()
	a := open(t, "p/")
	if err := semfs.WriteFile(ctx, a, "/docs/x.md", []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := semfs.Mkdir(ctx, a, "/empty", 0o755); err != nil {
		t.Fatal(err)
	}
	// A second FS on the same bucket and prefix: another daemon.
	b, err := Open(ctx, Config{Endpoint: s3.Endpoint, AccessKey: s3.AccessKey, SecretKey: s3.SecretKey, Bucket: a.bucket, Prefix: "p/"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := semfs.ReadFile(ctx, b, "/docs/x.md")
	if err != nil || string(got) != "hello" {
		t.Fatalf("second FS read = %q, %v", got, err)
	}
	if info, err := b.Stat(ctx, "/empty"); err != nil || !info.IsDir() {
		t.Fatalf("empty dir not seen by second FS: %v", err)
	}
	// A write by b is found by a's Stat before any Refresh (it asks the store).
	if err := semfs.WriteFile(ctx, b, "/docs/y.md", []byte("from b"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := semfs.ReadFile(ctx, a, "/docs/y.md"); err != nil || string(got) != "from b" {
		t.Fatalf("a reading b's write = %q, %v", got, err)
	}
	// Listings need a Refresh.
	if err := a.Remove(ctx, "/docs/x.md"); err != nil {
		t.Fatal(err)
	}
	if err := b.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	entries, _ := b.ReadDir(ctx, "/docs")
	if len(entries) != 1 || entries[0].Name() != "y.md" {
		t.Fatalf("after refresh /docs = %v", entries)
	}
	// Objects outside the prefix are not part of the tree.
	if _, err := a.c.PutObject(ctx, a.bucket, "other/z", bytes.NewReader([]byte("z")), 1, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	a.Refresh(ctx)
	if _, err := a.Stat(ctx, "/other/z"); !errors.Is(err, semfs.ErrNotExist) {
		t.Fatalf("key outside prefix visible: %v", err)
	}
}

func TestLargeFileMultipartAndFailedUploadKeepsOldVersion(t *testing.T) {
	s3, open := newStore(t)
	ctx := context.Background()
	f := open(t, "")
	big := bytes.Repeat([]byte("0123456789abcdef"), (12<<20)/16) // 12 MiB: three 5 MiB parts
	if err := f.WriteFile(ctx, "/big.bin", big, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := f.ReadFile(ctx, "/big.bin")
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("big read back: %d bytes, %v", len(got), err)
	}
	// Ranged reads of a large object through Open.
	file, err := f.Open(ctx, "/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if _, err := file.(semfs.ReadAtFile).ReadAt(buf, 7<<20); err != nil || !bytes.Equal(buf, big[7<<20:7<<20+16]) {
		t.Fatalf("ReadAt = %q, %v", buf, err)
	}
	file.Close()

	// Stop the server mid-session: the upload fails, and after the server
	// returns the old bytes are intact.
	w, err := f.OpenFile(ctx, "/big.bin", 2 /* O_RDWR */, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt([]byte("CHANGED"), 0); err != nil {
		t.Fatal(err)
	}
	s3.Stop()
	cctx, cancel := context.WithTimeout(ctx, 0)
	defer cancel()
	_ = cctx
	err = w.Close()
	if err == nil {
		t.Fatal("Close succeeded with the object store down")
	}
	if strings.Contains(err.Error(), s3.SecretKey) {
		t.Fatalf("error leaks the secret key: %v", err)
	}
	if err := s3.Start(); err != nil {
		t.Fatal(err)
	}
	got, err = f.ReadFile(ctx, "/big.bin")
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("after failed upload: %d bytes, %v; want the previous version", len(got), err)
	}
	if size, _ := f.TotalSize(ctx); size != int64(len(big)) {
		t.Fatalf("TotalSize = %d after a failed upload, want %d", size, len(big))
	}
}

func TestBadConfig(t *testing.T) {
	s3 := testserver.StartS3(t)
	ctx := context.Background()
	_, err := Open(ctx, Config{Endpoint: s3.Endpoint, AccessKey: s3.AccessKey, SecretKey: "wrong-secret-xyz", Bucket: "nope"})
	if err == nil || strings.Contains(err.Error(), "wrong-secret-xyz") {
		t.Fatalf("bad credentials: err = %v", err)
	}
	_, err = Open(ctx, Config{Endpoint: s3.Endpoint, AccessKey: s3.AccessKey, SecretKey: s3.SecretKey, Bucket: "missing-bucket"})
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("missing bucket: err = %v", err)
	}
	var c Config
	if err := c.ParseURL("s3://bkt/some/prefix"); err != nil || c.Bucket != "bkt" || c.Prefix != "some/prefix/" {
		t.Fatalf("ParseURL = %+v, %v", c, err)
	}
	if err := c.ParseURL("http://user:pass@x/y"); err == nil || strings.Contains(err.Error(), "pass") {
		t.Fatalf("ParseURL of a non-s3 URL: %v", err)
	}
}

// TestRefreshInterval: two daemons on one bucket with a 300 ms refresh
// interval see each other's creations and removals in their listings within
// a bounded delay, without calling Refresh.
func TestRefreshInterval(t *testing.T) {
	s3 := testserver.StartS3(t)
	ctx := context.Background()
	cfg := Config{Endpoint: s3.Endpoint, AccessKey: s3.AccessKey, SecretKey: s3.SecretKey,
		Bucket: fmt.Sprintf("refresh-%d", bucketSeq.Add(1)), CreateBucket: true, SpoolDir: t.TempDir(),
		RefreshInterval: 300 * time.Millisecond}
	a, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	names := func(f *FS, dir string) string {
		es, _ := f.ReadDir(ctx, dir)
		var out []string
		for _, e := range es {
			out = append(out, e.Name())
		}
		return strings.Join(out, ",")
	}
	waitList := func(f *FS, dir, want string) time.Duration {
		t.Helper()
		start := time.Now()
		for names(f, dir) != want {
			if time.Since(start) > 5*time.Second {
				t.Fatalf("listing of %s = %q after 5 s, want %q", dir, names(f, dir), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
		return time.Since(start)
	}
	if err := a.WriteFile(ctx, "/shared/one.md", []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	d1 := waitList(b, "/shared", "one.md")
	if err := b.WriteFile(ctx, "/shared/two.md", []byte("22"), 0o644); err != nil {
		t.Fatal(err)
	}
	d2 := waitList(a, "/shared", "one.md,two.md")
	if err := a.Remove(ctx, "/shared/one.md"); err != nil {
		t.Fatal(err)
	}
	d3 := waitList(b, "/shared", "two.md")
	for _, d := range []time.Duration{d1, d2, d3} {
		if d > 2*time.Second {
			t.Fatalf("a change took %v to appear with a 300 ms interval", d)
		}
	}
	if n, _ := b.TotalSize(ctx); n != 2 {
		t.Fatalf("TotalSize after refresh = %d, want 2", n)
	}
	if err := b.RefreshErr(); err != nil {
		t.Fatal(err)
	}
	t.Logf("changes appeared after %v, %v, %v", d1, d2, d3)
	// After Close the index no longer follows the bucket.
	b.Close()
	if err := a.WriteFile(ctx, "/shared/three.md", []byte("3"), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if got := names(b, "/shared"); got != "two.md" {
		t.Fatalf("a closed FS kept refreshing: %q", got)
	}
}

// TestRemoteReadPatterns: a large object read sequentially (one streaming
// request), with jumps back and forth, and with reads straddling blocks
// returns exactly the stored bytes.
func TestRemoteReadPatterns(t *testing.T) {
	_, open := newStore(t)
	ctx := context.Background()
	f := open(t, "")
	data := make([]byte, 5<<20+777)
	for i := range data {
		data[i] = byte(i*31 + i>>13)
	}
	if err := f.WriteFile(ctx, "/r.bin", data, 0o644); err != nil {
		t.Fatal(err)
	}
	file, err := f.Open(ctx, "/r.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	r := file.(semfs.ReadAtFile)
	check := func(off int64, n int) {
		t.Helper()
		buf := make([]byte, n)
		got, err := r.ReadAt(buf, off)
		want := data[off:min(off+int64(n), int64(len(data)))]
		if got != len(want) || !bytes.Equal(buf[:got], want) || (err != nil && got == n) {
			t.Fatalf("ReadAt(%d, %d) = %d, %v", off, n, got, err)
		}
	}
	check(0, 3<<19)                 // first block and a half: streams
	check(3<<19, 1<<20)             // continues the stream across a block boundary
	check(4<<20+5, 100)             // jumps ahead: a ranged block
	check(100, 1<<20)               // back to the start
	check(1<<20-10, 20)             // straddles blocks 0 and 1
	check(int64(len(data))-50, 100) // runs past the end
	all, err := io.ReadAll(file)
	if err != nil || !bytes.Equal(all, data) {
		t.Fatalf("sequential read: %d bytes, %v", len(all), err)
	}
}
