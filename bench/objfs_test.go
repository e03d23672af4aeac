package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/semfs/semfs/internal/testserver"
	"github.com/semfs/semfs/objfs"
)

// TestObjfsScale compares objfs with the raw minio-go client on the same
// versitygw: stat and ls (structural index vs a round trip), sequential
// 64 MiB write and read, and repeated reads with and without the cache.
func TestObjfsScale(t *testing.T) {
	benchEnabled(t)
	ctx := context.Background()
	s3 := testserver.StartS3(t)
	cfg := objfs.Config{Endpoint: s3.Endpoint, AccessKey: s3.AccessKey, SecretKey: s3.SecretKey,
		Bucket: "bench", CreateBucket: true, SpoolDir: t.TempDir()}
	f, err := objfs.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	nocache := cfg
	nocache.CreateBucket, nocache.CacheBytes = false, 16 // caches nothing
	g, err := objfs.Open(ctx, nocache)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := minio.New(s3.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(s3.AccessKey, s3.SecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("\n| workload | objfs | raw minio-go | objfs/raw |\n|---|---|---|---|\n")

	const nfiles = 1000
	for i := range nfiles {
		if err := f.WriteFile(ctx, fmt.Sprintf("/d/f%04d", i), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var a, b lat
	for i := range 2000 {
		p := fmt.Sprintf("d/f%04d", i%nfiles)
		start := time.Now()
		if _, err := f.Stat(ctx, "/"+p); err != nil {
			t.Fatal(err)
		}
		a = append(a, time.Since(start))
		start = time.Now()
		if _, err := raw.StatObject(ctx, "bench", p, minio.StatObjectOptions{}); err != nil {
			t.Fatal(err)
		}
		b = append(b, time.Since(start))
	}
	fmt.Printf("| stat p50 (µs) | %.1f | %.1f | %.4f |\n", us(a.pct(.5)), us(b.pct(.5)), a.pct(.5).Seconds()/b.pct(.5).Seconds())
	a, b = nil, nil
	for range 30 {
		start := time.Now()
		if es, err := f.ReadDir(ctx, "/d"); err != nil || len(es) != nfiles {
			t.Fatal(len(es), err)
		}
		a = append(a, time.Since(start))
		start = time.Now()
		n := 0
		for o := range raw.ListObjects(ctx, "bench", minio.ListObjectsOptions{Prefix: "d/"}) {
			if o.Err != nil {
				t.Fatal(o.Err)
			}
			if !strings.HasSuffix(o.Key, "/") { // not the directory marker
				n++
			}
		}
		if n != nfiles {
			t.Fatalf("raw listing found %d", n)
		}
		b = append(b, time.Since(start))
	}
	fmt.Printf("| ls of %d entries p50 (µs) | %.1f | %.1f | %.4f |\n", nfiles, us(a.pct(.5)), us(b.pct(.5)), a.pct(.5).Seconds()/b.pct(.5).Seconds())

	const size = 64 << 20
	data := make([]byte, size)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	var wa, wb, ra, rb lat
	for round := range 3 {
		start := time.Now()
		w, err := f.OpenFile(ctx, "/big.bin", os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off < size; off += 1 << 20 {
			if _, err := w.Write(data[off : off+1<<20]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		wa = append(wa, time.Since(start))
		start = time.Now()
		if _, err := raw.PutObject(ctx, "bench", "raw.bin", bytes.NewReader(data), size, minio.PutObjectOptions{PartSize: 16 << 20}); err != nil {
			t.Fatal(err)
		}
		wb = append(wb, time.Since(start))

		start = time.Now()
		r, err := f.Open(ctx, "/big.bin")
		if err != nil {
			t.Fatal(err)
		}
		if n, err := io.Copy(io.Discard, r.(io.Reader)); err != nil || n != size {
			t.Fatal(n, err)
		}
		r.Close()
		ra = append(ra, time.Since(start))
		if round == 0 { // untimed: the bytes are right
			if got, err := f.ReadFile(ctx, "/big.bin"); err != nil || !bytes.Equal(got, data) {
				t.Fatal("objfs read back different bytes", err)
			}
		}
		start = time.Now()
		o, err := raw.GetObject(ctx, "bench", "raw.bin", minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n, err := io.Copy(io.Discard, o); err != nil || n != size {
			t.Fatal(n, err)
		}
		o.Close()
		rb = append(rb, time.Since(start))
	}
	mbs := func(d time.Duration) float64 { return size / d.Seconds() / 1e6 }
	fmt.Printf("| 64 MiB sequential write MB/s (median of 3) | %.0f | %.0f | %.2f |\n", mbs(wa.pct(.5)), mbs(wb.pct(.5)), mbs(wa.pct(.5))/mbs(wb.pct(.5)))
	fmt.Printf("| 64 MiB sequential read MB/s (median of 3) | %.0f | %.0f | %.2f |\n", mbs(ra.pct(.5)), mbs(rb.pct(.5)), mbs(ra.pct(.5))/mbs(rb.pct(.5)))

	// Repeated reads of a 1 MiB file: cached FS, uncached FS, raw GET.
	if err := f.WriteFile(ctx, "/mid.bin", data[:1<<20], 0o644); err != nil {
		t.Fatal(err)
	}
	var ca, cb, cr lat
	for range 50 {
		start := time.Now()
		if _, err := f.ReadFile(ctx, "/mid.bin"); err != nil {
			t.Fatal(err)
		}
		ca = append(ca, time.Since(start))
		start = time.Now()
		if _, err := g.ReadFile(ctx, "/mid.bin"); err != nil {
			t.Fatal(err)
		}
		cb = append(cb, time.Since(start))
		start = time.Now()
		o, err := raw.GetObject(ctx, "bench", "mid.bin", minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, o)
		o.Close()
		cr = append(cr, time.Since(start))
	}
	fmt.Printf("| 1 MiB repeated read p50 (µs), read cache on | %.1f | %.1f | %.4f |\n", us(ca.pct(.5)), us(cr.pct(.5)), ca.pct(.5).Seconds()/cr.pct(.5).Seconds())
	fmt.Printf("| 1 MiB repeated read p50 (µs), read cache off | %.1f | %.1f | %.4f |\n", us(cb.pct(.5)), us(cr.pct(.5)), cb.pct(.5).Seconds()/cr.pct(.5).Seconds())
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }
