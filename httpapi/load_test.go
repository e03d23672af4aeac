package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/semfs/semfs/internal/testbin"
)

// TestHTTPSearchLoad runs 50 concurrent clients posting /v1/search to a
// running `semfs http` and requires every request to succeed with hits.
// It runs 2 s by default; SEMFS_HTTP_LOAD=30s makes it the benchmark of
// docs/bench/api.md (throughput, p50 and p99 are logged with -v).
func TestHTTPSearchLoad(t *testing.T) {
	dur := 2 * time.Second
	if v := os.Getenv("SEMFS_HTTP_LOAD"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("SEMFS_HTTP_LOAD=%q: %v", v, err)
		}
		dur = d
	}
	const clients = 50
	root := testbin.HostTree(t)
	base := testbin.StartHTTP(t, root, tokens)
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	body := []byte(`{"query":"token expires login","limit":5}`)

	var (
		mu     sync.Mutex
		lat    []time.Duration
		errs   int
		first  error
		wg     sync.WaitGroup
		stop   = time.Now().Add(dur)
		starts = time.Now()
	)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			bad := 0
			var firstErr error
			for time.Now().Before(stop) {
				req, _ := http.NewRequest("POST", base+"/v1/search", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer eng-token")
				req.Header.Set("Content-Type", "application/json")
				t0 := time.Now()
				res, err := hc.Do(req)
				if err != nil {
					bad++
					firstErr = err
					continue
				}
				var out struct {
					Hits []struct {
						Path string `json:"path"`
					} `json:"hits"`
				}
				derr := json.NewDecoder(res.Body).Decode(&out)
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				mine = append(mine, time.Since(t0))
				if res.StatusCode != 200 || derr != nil || len(out.Hits) == 0 || out.Hits[0].Path != "/notes/auth.md" {
					bad++
					if firstErr == nil {
						firstErr = &loadError{res.StatusCode, derr, len(out.Hits)}
					}
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			errs += bad
			if first == nil {
				first = firstErr
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(starts)
	if errs > 0 {
		t.Fatalf("%d of %d requests failed; first: %v", errs, len(lat), first)
	}
	if len(lat) == 0 {
		t.Fatal("no request completed")
	}
	slices.Sort(lat)
	t.Logf("%d clients, %v: %d requests, %.0f req/s, p50 %v, p99 %v, max %v, 0 errors",
		clients, elapsed.Round(time.Millisecond), len(lat), float64(len(lat))/elapsed.Seconds(),
		lat[len(lat)/2].Round(10*time.Microsecond), lat[len(lat)*99/100].Round(10*time.Microsecond), lat[len(lat)-1].Round(10*time.Microsecond))
}

type loadError struct {
	status int
	err    error
	hits   int
}

func (e *loadError) Error() string {
	b, _ := json.Marshal(map[string]any{"status": e.status, "decode": e.err, "hits": e.hits})
	return string(b)
}
