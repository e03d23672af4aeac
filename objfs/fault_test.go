package objfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/internal/netproxy"
	"github.com/semfs/semfs/internal/testserver"
)

// faultConfig is a tree in a fresh bucket, reached at endpoint.
func faultConfig(t *testing.T, s3 *testserver.S3, endpoint string) Config {
	return Config{
		Endpoint: endpoint, AccessKey: s3.AccessKey, SecretKey: s3.SecretKey,
		Bucket: fmt.Sprintf("fault-%d", bucketSeq.Add(1)), CreateBucket: true,
		CacheBytes: 1 << 20, PartSize: 5 << 20, SpoolDir: t.TempDir(),
		MaxRetries: 2,
	}
}

func openCfg(t *testing.T, cfg Config) *FS {
	t.Helper()
	f, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return f
}

func randBytes(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

func startProxy(t *testing.T, target string) *netproxy.Proxy {
	t.Helper()
	p, err := netproxy.New(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// TestDelayedLink: with 20 ms each way between objfs and the store, every
// operation stays correct, and stat/ls are answered from the structural
// index without touching the network.
func TestDelayedLink(t *testing.T) {
	s3 := testserver.StartS3(t)
	px := startProxy(t, s3.Endpoint)
	px.SetLatency(20*time.Millisecond, 20*time.Millisecond)
	ctx := context.Background()
	cfg := faultConfig(t, s3, px.Addr())
	// A pooled connection the store has closed is still reused until its
	// close crosses the 20 ms link, and the request on it is reset; the
	// client retries such requests, and two tries once were not enough in
	// CI (a PUT reset on its first two connections). This test is about
	// correctness over a slow link, not about giving up: allow the
	// client's usual retries.
	cfg.MaxRetries = 0
	f := openCfg(t, cfg)

	small := []byte("a small note\n")
	big := randBytes(1, 11<<20+123) // multipart: three parts
	if err := f.WriteFile(ctx, "/d/small.txt", small, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := f.OpenFile(ctx, "/d/big.bin", os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(big); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Rename(ctx, "/d/small.txt", "/d/moved.txt"); err != nil {
		t.Fatal(err)
	}

	// stat and ls: no bytes cross the link. (The proxy counts a chunk
	// after writing it, which may be after the client read it: let the
	// counters settle first.)
	time.Sleep(100 * time.Millisecond)
	up, down := px.Bytes()
	start := time.Now()
	for range 100 {
		if info, err := f.Stat(ctx, "/d/big.bin"); err != nil || info.Size() != int64(len(big)) {
			t.Fatalf("Stat = %v, %v", info, err)
		}
		if entries, err := f.ReadDir(ctx, "/d"); err != nil || len(entries) != 2 {
			t.Fatalf("ReadDir = %v, %v", entries, err)
		}
	}
	if el := time.Since(start); el > 40*time.Millisecond*10 {
		t.Fatalf("100 stat+ls took %v over a 40 ms round trip: they are not served from the index", el)
	}
	if u, d := px.Bytes(); u != up || d != down {
		t.Fatalf("stat/ls sent %d bytes and received %d over the link", u-up, d-down)
	}

	// Reads: correct bytes, and they really crossed the slow link.
	start = time.Now()
	got, err := f.ReadFile(ctx, "/d/moved.txt")
	if err != nil || !bytes.Equal(got, small) {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	if el := time.Since(start); el < 40*time.Millisecond {
		t.Fatalf("an uncached read over a 40 ms round trip took %v: the proxy is not in the path", el)
	}
	r, err := f.Open(ctx, "/d/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	got, err = io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("ranged read of the big file: %d bytes, %v", len(got), err)
	}
	// Another daemon reaching the store directly sees the same tree.
	g := openCfg(t, Config{Endpoint: s3.Endpoint, AccessKey: s3.AccessKey, SecretKey: s3.SecretKey, Bucket: f.bucket})
	if got, err := g.ReadFile(ctx, "/d/big.bin"); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("direct read: %d bytes, %v", len(got), err)
	}
	if _, err := g.Stat(ctx, "/d/small.txt"); !errors.Is(err, semfs.ErrNotExist) {
		t.Fatalf("renamed-away path: %v", err)
	}
}

// TestLinkCutMidUpload cuts the link in the middle of a multipart upload:
// when the link comes straight back the upload is retried and succeeds;
// when it stays down Close reports a clear error and the previous object is
// intact, in the bucket and in the index.
func TestLinkCutMidUpload(t *testing.T) {
	s3 := testserver.StartS3(t)
	px := startProxy(t, s3.Endpoint)
	ctx := context.Background()
	cfg := faultConfig(t, s3, px.Addr())
	f := openCfg(t, cfg)
	direct := cfg
	direct.Endpoint = s3.Endpoint
	direct.CreateBucket = false

	v1 := randBytes(1, 12<<20)
	if err := f.WriteFile(ctx, "/big.bin", v1, 0o644); err != nil {
		t.Fatal(err)
	}
	rewrite := func(data []byte) error {
		w, err := f.OpenFile(ctx, "/big.bin", os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			w.Close()
			return err
		}
		return w.Close()
	}
	cutAfter := func(n int64, refuse bool) {
		base, _ := px.Bytes()
		px.CutWhen(func(up, _ int64) bool {
			if up < base+n {
				return false
			}
			if refuse {
				px.Refuse(true)
			}
			return true
		})
	}

	// A cut that heals at once: the client retries the part, Close succeeds.
	v2 := randBytes(2, 12<<20)
	accepted := px.Accepted()
	cutAfter(7<<20, false)
	if err := rewrite(v2); err != nil {
		t.Fatalf("upload with a transient cut: %v", err)
	}
	if px.Accepted() == accepted {
		t.Fatal("the cut did not happen: no new connection was made")
	}
	if got, err := openCfg(t, direct).ReadFile(ctx, "/big.bin"); err != nil || !bytes.Equal(got, v2) {
		t.Fatalf("after a retried upload the bucket holds %d bytes (%v), want v2", len(got), err)
	}

	// A cut that lasts: Close fails, v2 stays.
	v3 := randBytes(3, 12<<20)
	cutAfter(3<<20, true)
	err := rewrite(v3)
	if err == nil {
		t.Fatal("Close succeeded with the link down")
	}
	if semfs.Sentinel(err) != nil && !errors.Is(err, semfs.ErrNotExist) {
		t.Logf("error carries sentinel %v", semfs.Sentinel(err))
	}
	msg := err.Error()
	if !strings.Contains(msg, "/big.bin") || !strings.Contains(msg, "object store") || strings.Contains(msg, s3.SecretKey) {
		t.Fatalf("unclear or leaky error: %v", msg)
	}
	if info, err := f.Stat(ctx, "/big.bin"); err != nil || info.Size() != int64(len(v2)) {
		t.Fatalf("index after a failed upload: %v, %v", info, err)
	}
	px.Refuse(false)
	if got, err := f.ReadFile(ctx, "/big.bin"); err != nil || !bytes.Equal(got, v2) {
		t.Fatalf("after a failed upload objfs reads %d bytes (%v), want the previous version", len(got), err)
	}
	if got, err := openCfg(t, direct).ReadFile(ctx, "/big.bin"); err != nil || !bytes.Equal(got, v2) {
		t.Fatalf("after a failed upload the bucket holds %d bytes (%v), want the previous version", len(got), err)
	}
	// And the same write succeeds once the link is back.
	if err := rewrite(v3); err != nil {
		t.Fatal(err)
	}
	if got, err := openCfg(t, direct).ReadFile(ctx, "/big.bin"); err != nil || !bytes.Equal(got, v3) {
		t.Fatalf("bucket holds %d bytes (%v), want v3", len(got), err)
	}
}

// TestReadRetriesAfterCut: a read whose response is cut mid-body is
// requested again (reads are safe to repeat); with retries off the same cut
// is an error, never short or wrong bytes.
func TestReadRetriesAfterCut(t *testing.T) {
	s3 := testserver.StartS3(t)
	px := startProxy(t, s3.Endpoint)
	ctx := context.Background()
	cfg := faultConfig(t, s3, px.Addr())
	f := openCfg(t, cfg)
	data := randBytes(4, 6<<20)
	if err := f.WriteFile(ctx, "/r.bin", data, 0o644); err != nil {
		t.Fatal(err)
	}
	cutAt := func(n int64) {
		_, base := px.Bytes()
		px.CutWhen(func(_, down int64) bool { return down >= base+n })
	}
	readAll := func(f *FS) ([]byte, error) {
		r, err := f.Open(ctx, "/r.bin")
		if err != nil {
			return nil, err
		}
		defer r.Close()
		return io.ReadAll(r)
	}

	accepted := px.Accepted()
	cutAt(2<<20 + 1000) // inside the third 1 MiB block
	got, err := readAll(f)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("ranged read across a cut: %d bytes, %v", len(got), err)
	}
	cutAt(3 << 20) // whole-object read
	got, err = f.ReadFile(ctx, "/r.bin")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("whole read across a cut: %d bytes, %v", len(got), err)
	}
	if px.Accepted() < accepted+2 {
		t.Fatalf("the cuts did not happen (%d new connections)", px.Accepted()-accepted)
	}

	cfg.CreateBucket, cfg.ReadRetries = false, -1
	g := openCfg(t, cfg)
	cutAt(2<<20 + 1000)
	got, err = readAll(g)
	if err == nil {
		if !bytes.Equal(got, data) {
			t.Fatal("a cut read without retries returned wrong bytes and no error")
		}
		t.Log("the client library recovered the cut body itself")
	} else if strings.Contains(err.Error(), s3.SecretKey) {
		t.Fatalf("error leaks the secret: %v", err)
	}
	px.CutWhen(nil)
}

// TestServerRestartDuringWrites stops and restarts the S3 server during a
// stream of writes: every write acknowledged by Close (or Sync) is readable
// afterwards with exactly its bytes; every failed one reported an error and
// left either its previous acknowledged state or its full new contents —
// never a torn object.
func TestServerRestartDuringWrites(t *testing.T) {
	s3 := testserver.StartS3(t)
	ctx := context.Background()
	cfg := faultConfig(t, s3, s3.Endpoint)
	cfg.MaxRetries = 1
	f := openCfg(t, cfg)

	type result struct {
		path      string
		acked     []byte   // the last acknowledged contents (nil: none)
		allowed   [][]byte // what a failed write may have left
		failed    bool
		errorText string
	}
	const n = 60
	results := make([]result, n)
	var acked atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		deadline := time.Now().Add(40 * time.Second)
		for i := 0; i < n && time.Now().Before(deadline); i++ {
			p := fmt.Sprintf("/s/f%03d", i%20)
			var prev []byte // the path's last acknowledged contents
			if i >= 20 {
				prev = results[i-20].acked
			}
			a := []byte(fmt.Sprintf("write %d part A %s\n", i, strings.Repeat("a", i*97)))
			b := []byte(fmt.Sprintf("write %d part B\n", i))
			r := result{path: p, acked: prev, allowed: [][]byte{prev}}
			var err error
			if i%2 == 0 {
				full := append(append([]byte{}, a...), b...)
				r.allowed = append(r.allowed, full)
				if err = f.WriteFile(ctx, p, full, 0o644); err == nil {
					r.acked = full
				}
			} else {
				var w semfs.RWFile
				w, err = f.OpenFile(ctx, p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
				if err == nil {
					r.allowed = append(r.allowed, []byte{}, a)
					if _, err = w.Write(a); err == nil {
						if err = w.Sync(); err == nil {
							r.acked = a
							r.allowed = [][]byte{a}
						}
					}
					full := append(append([]byte{}, a...), b...)
					r.allowed = append(r.allowed, full)
					if err == nil {
						if _, err = w.Write(b); err != nil {
							t.Errorf("spool write: %v", err)
						}
					}
					if cerr := w.Close(); err == nil {
						err = cerr
						if err == nil {
							r.acked = full
						}
					}
				}
			}
			if err != nil {
				r.failed, r.errorText = true, err.Error()
			} else {
				acked.Add(1)
			}
			results[i] = r
			time.Sleep(15 * time.Millisecond)
		}
	}()
	for acked.Load() < 10 {
		time.Sleep(5 * time.Millisecond)
	}
	s3.Stop()
	time.Sleep(1500 * time.Millisecond)
	if err := s3.Start(); err != nil {
		t.Fatal(err)
	}
	<-done

	failed := 0
	after := false
	for i, r := range results {
		if r.path == "" {
			continue
		}
		if r.failed {
			failed++
			if strings.Contains(r.errorText, s3.SecretKey) || !strings.Contains(r.errorText, r.path) {
				t.Errorf("write %d: unclear or leaky error: %s", i, r.errorText)
			}
		} else if failed > 0 {
			after = true
		}
	}
	if failed == 0 {
		t.Fatal("no write failed while the server was down: the fault was not exercised")
	}
	if !after {
		t.Fatal("no write succeeded after the server came back")
	}
	// The final state of every path, read by this FS and by a fresh one.
	g := openCfg(t, Config{Endpoint: s3.Endpoint, AccessKey: s3.AccessKey, SecretKey: s3.SecretKey, Bucket: cfg.Bucket})
	final := map[string]result{}
	for _, r := range results {
		if r.path != "" {
			final[r.path] = r
		}
	}
	for p, r := range final {
		for _, fsys := range []*FS{f, g} {
			got, err := fsys.ReadFile(ctx, p)
			switch {
			case !r.failed:
				if err != nil || !bytes.Equal(got, r.acked) {
					t.Errorf("%s: acknowledged %d bytes, read %d (%v)", p, len(r.acked), len(got), err)
				}
			case err != nil && r.acked == nil && errors.Is(err, semfs.ErrNotExist):
				// never stored: fine
			case err != nil:
				t.Errorf("%s: read after a failed write: %v", p, err)
			default:
				ok := false
				for _, a := range r.allowed {
					ok = ok || bytes.Equal(got, a)
				}
				if !ok {
					t.Errorf("%s: a failed write left %d bytes that are neither the previous nor the new contents", p, len(got))
				}
			}
		}
	}
	t.Logf("%d writes, %d failed while the server was down", len(final), failed)
}
