package memfs

import (
	"testing"
	"unsafe"
)

// TestNodeSize guards the memory budget: a million files are a million
// nodes, and 64 bytes is a size class of the Go allocator.
func TestNodeSize(t *testing.T) {
	if n := unsafe.Sizeof(node{}); n > 64 {
		t.Fatalf("node is %d bytes; keep it within 64", n)
	}
}
