package memfs

import (
	"bytes"
	"context"
	"os"
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

// TestReadFileUnlockedCopy writes into a large file while ReadFile copies
// it out without the lock: the copy must be the file as it was.
func TestReadFileUnlockedCopy(t *testing.T) {
	ctx := context.Background()
	m := New()
	orig := bytes.Repeat([]byte{'a'}, readUnderLock+ChunkSize)
	m.WriteFile(ctx, "/big", orig, 0o644)
	testHookUnlockedRead = func() {
		testHookUnlockedRead = nil
		f, err := m.OpenFile(ctx, "/big", os.O_RDWR, 0)
		if err != nil {
			t.Error(err)
			return
		}
		f.WriteAt([]byte("WRITTEN DURING THE COPY"), ChunkSize+3)
		f.Truncate(10)
		f.Close()
	}
	defer func() { testHookUnlockedRead = nil }()
	got, err := m.ReadFile(ctx, "/big")
	if err != nil || !bytes.Equal(got, orig) {
		t.Fatalf("ReadFile returned %d bytes (equal to the file when read: %v), %v", len(got), bytes.Equal(got, orig), err)
	}
	if now, _ := m.ReadFile(ctx, "/big"); string(now) != "aaaaaaaaaa" {
		t.Fatalf("the write during the copy was lost: %q", now)
	}
}
