package sqlite

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
)

// checkIDs fails unless the chunk and file ids of ix fit the postings,
// Check finds nothing and a reopen repairs nothing.
func checkIDs(t *testing.T, ix *Index) {
	t.Helper()
	ctx := context.Background()
	for _, table := range []string{"chunks", "files"} {
		var top int64
		if err := ix.db.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM `+table).Scan(&top); err != nil {
			t.Fatal(err)
		}
		if top > maxDocID {
			t.Errorf("%s: id %d past the postings' range", table, top)
		}
	}
	if r, err := ix.Check(ctx, false); err != nil || len(r.Problems) > 0 {
		t.Errorf("check: %+v %v", r.Problems, err)
	}
	re := open(t, ix.path)
	re.Close()
	if len(re.Repaired) > 0 {
		t.Errorf("reopen repaired: %v", re.Repaired)
	}
}

// grepIndexed is grepPaths without /z.txt, a row with no content the
// tests add (grep offers files not grep-indexed as candidates).
func grepIndexed(t *testing.T, ix *Index, pattern string) []string {
	t.Helper()
	return slices.DeleteFunc(grepPaths(t, ix, pattern), func(p string) bool { return p == "/z.txt" })
}

// Chunk ids only count up, but the postings hold them as uint32: a chunk
// given an id past 2^32-1 took the postings document of an old chunk
// (searching "banana" found /a.txt). Put renumbers the ids first.
func TestChunkIDsRenumberedAtUint32(t *testing.T) {
	ctx := context.Background()
	ix := open(t, filepath.Join(t.TempDir(), "i.db"))
	if err := ix.Put(ctx, item("/a.txt", "alpha apple\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	c, _ := ix.NeedingEmbedding(ctx, embedding.SpaceContent, "", 10)
	if len(c) != 1 {
		t.Fatalf("needing: %+v", c)
	}
	if err := ix.SetEmbedding(ctx, embedding.SpaceContent, c[0].Key, c[0].Text, []float32{0, 1}); err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := ix.db.QueryRowContext(ctx, `SELECT id FROM chunks WHERE key = '/a.txt#00000'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	// The next id would be 2^32+id, id as uint32.
	if _, err := ix.db.ExecContext(ctx, `UPDATE kv SET value = ? WHERE key = 'chunk_seq'`, int64(1)<<32+id-1); err != nil {
		t.Fatal(err)
	}
	if err := ix.Put(ctx, item("/b.txt", "banana bread\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	if got, want := searchPaths(t, ix, "apple"), []string{"/a.txt:alpha apple\n"}; !slices.Equal(got, want) {
		t.Errorf("search apple: %v, want %v", got, want)
	}
	if got, want := searchPaths(t, ix, "banana"), []string{"/b.txt:banana bread\n"}; !slices.Equal(got, want) {
		t.Errorf("search banana: %v, want %v", got, want)
	}
	var seq int64
	if err := ix.db.QueryRowContext(ctx, `SELECT CAST(value AS INTEGER) FROM kv WHERE key = 'chunk_seq'`).Scan(&seq); err != nil || seq != 2 {
		t.Errorf("chunk_seq after renumbering: %d %v, want 2", seq, err)
	}
	// Vectors are kept: nothing needs embedding again.
	if n, _ := ix.CountNeedingEmbedding(ctx, embedding.SpaceContent); n != 1 {
		t.Errorf("chunks needing embedding: %d, want 1 (/b.txt)", n)
	}
	checkIDs(t, ix)
}

// File ids grow too (each atomic save gives a new row max(id)+1); the
// grep postings hold them as uint32, and Put renumbers them as well.
func TestFileIDsRenumberedAtUint32(t *testing.T) {
	ctx := context.Background()
	ix := open(t, filepath.Join(t.TempDir(), "i.db"))
	if err := ix.Put(ctx, item("/a.txt", "alpha apple\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	// A row at 2^32 makes the next file's id 2^32+1, /a.txt's as uint32.
	if _, err := ix.db.ExecContext(ctx, `INSERT INTO files(id, path, created_at, updated_at) VALUES (?, '/z.txt', 0, 0)`, int64(1)<<32); err != nil {
		t.Fatal(err)
	}
	if err := ix.Put(ctx, item("/b.txt", "banana bread\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	if got, want := grepIndexed(t, ix, "apple"), []string{"/a.txt"}; !slices.Equal(got, want) {
		t.Errorf("grep apple: %v, want %v", got, want)
	}
	if got, want := grepIndexed(t, ix, "banana"), []string{"/b.txt"}; !slices.Equal(got, want) {
		t.Errorf("grep banana: %v, want %v", got, want)
	}
	checkIDs(t, ix)
}

// A second handle on the file (another process) reloads after the
// renumbering and then looks up and writes with the new ids; the first
// handle sees its writes.
func TestRenumberSeenByOtherHandle(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	a, b := open(t, path), open(t, path)
	if err := a.Put(ctx, item("/a.txt", "alpha apple\n", semfs.Tags{}), item("/c.txt", "cherry cake\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	// Re-saving /c.txt leaves a tombstone to carry over.
	if err := a.Put(ctx, item("/c.txt", "cherry cake\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	if got := searchPaths(t, b, "apple"); len(got) != 1 { // b loads the postings at the old ids
		t.Fatalf("b search apple: %v", got)
	}
	// The next chunk and file ids would be 2^32+1: /a.txt's as uint32.
	if _, err := a.db.ExecContext(ctx, `UPDATE kv SET value = ? WHERE key = 'chunk_seq'`, int64(1)<<32); err != nil {
		t.Fatal(err)
	}
	if _, err := a.db.ExecContext(ctx, `INSERT INTO files(id, path, created_at, updated_at) VALUES (?, '/z.txt', 0, 0)`, int64(1)<<32); err != nil {
		t.Fatal(err)
	}
	if err := a.Put(ctx, item("/b.txt", "banana bread\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	for _, ix := range []*Index{b, a} {
		for q, want := range map[string]string{"apple": "/a.txt:alpha apple\n", "banana": "/b.txt:banana bread\n", "cherry": "/c.txt:cherry cake\n"} {
			if got := searchPaths(t, ix, q); !slices.Equal(got, []string{want}) {
				t.Errorf("search %s: %v, want [%s]", q, got, want)
			}
			if got := grepIndexed(t, ix, q); len(got) != 1 || got[0] != want[:6] {
				t.Errorf("grep %s: %v, want [%s]", q, got, want[:6])
			}
		}
	}
	// b tombstones by the new ids: re-saving /a.txt and removing /c.txt
	// leave no stale document behind, as a sees.
	if err := b.Put(ctx, item("/a.txt", "alpha apricot\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	if err := b.Remove(ctx, "/c.txt", false); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string][]string{"apple": nil, "apricot": {"/a.txt:alpha apricot\n"}, "banana": {"/b.txt:banana bread\n"}, "cherry": nil} {
		if got := searchPaths(t, a, q); !slices.Equal(got, want) {
			t.Errorf("a after b's writes, search %s: %v, want %v", q, got, want)
		}
		if got := grepIndexed(t, a, q); len(got) != len(want) {
			t.Errorf("a after b's writes, grep %s: %v, want %v", q, got, want)
		}
	}
	checkIDs(t, a)
	checkIDs(t, b)
}
