package mcpserver_test

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/semfs/semfs/internal/testtree"
	"github.com/semfs/semfs/mcpserver"

	"github.com/semfs/semfs/internal/testbin"
)

// benchCalls are the two round trips of docs/bench/api.md.
var benchCalls = map[string]map[string]any{
	"read_file": {"path": "/notes/auth.md"},
	"search":    {"query": "token expires", "limit": 5},
}

// timeCalls calls tool b.N times on cs and reports the median and p99
// round trip.
func timeCalls(b *testing.B, cs *mcp.ClientSession, tool string) {
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: tool, Arguments: benchCalls[tool]}
	if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
		b.Fatalf("%s: %v %+v", tool, err, res)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, params)
		lat = append(lat, time.Since(t0))
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %+v", tool, err, res)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkToolServerSide is a tool call through the Go SDK's in-memory
// transport: the server's own cost (JSON-RPC, schema validation, the
// operation on the metadata layer over memfs + SQLite).
func BenchmarkToolServerSide(b *testing.B) {
	for _, tool := range []string{"read_file", "search"} {
		b.Run(tool, func(b *testing.B) {
			srv := mcpserver.New(testtree.New(b), mcpserver.Options{})
			st, ct := mcp.NewInMemoryTransports()
			ss, err := srv.MCP().Connect(context.Background(), st, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer ss.Close()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), ct, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			timeCalls(b, cs, tool)
		})
	}
}

// BenchmarkToolStdio is a tool call end to end: the Go SDK client spawns
// the built binary (`semfs mcp`, on a host directory with a SQLite index)
// and talks to it over stdio pipes.
func BenchmarkToolStdio(b *testing.B) {
	root := testbin.HostTree(b)
	for _, tool := range []string{"read_file", "search"} {
		b.Run(tool, func(b *testing.B) {
			cmd := exec.Command(testbin.Path(b), "mcp", "--root", root, "--app", "bench")
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			timeCalls(b, cs, tool)
		})
	}
}
