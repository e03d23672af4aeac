package sqlite

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/index"
)

// Two *Index values on one file stand for two processes (see
// multiproc_test.go). These tests check that B's next lookup sees what A
// committed — tags, vectors and postings — without reopening.

// embedAll gives every row of space waiting for a vector the vector
// vec(key), through ix.
func embedAll(t *testing.T, ix *Index, space string, vec func(key string) []float32) {
	t.Helper()
	ctx := context.Background()
	rows, err := ix.NeedingEmbedding(ctx, space, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	vecs := make([][]float32, len(rows))
	for i, r := range rows {
		vecs[i] = vec(r.Key)
	}
	if err := ix.SetEmbeddings(ctx, space, rows, vecs); err != nil {
		t.Fatal(err)
	}
}

func nearestKeys(t *testing.T, ix *Index, space string, q []float32) []string {
	t.Helper()
	hits, err := ix.Nearest(context.Background(), space, q, 10, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, h.Key)
	}
	slices.Sort(out)
	return out
}

func tagHits(t *testing.T, ix *Index, word string) []string {
	t.Helper()
	tiers, err := ix.TagTiers(context.Background(), []string{word})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(tiers[1])
	return tiers[1]
}

func TestPeerTagsAndVectorsSeenWithoutReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	a, b := open(t, path), open(t, path)
	east := func(string) []float32 { return []float32{1, 0, 0} }

	// A puts; B's tag index has the file at its next query.
	if err := a.Put(ctx, item("/n/otter.md", "otters hold hands\n", semfs.Tags{Task: "zoology"})); err != nil {
		t.Fatal(err)
	}
	if got, want := tagHits(t, b, "zoology"), []string{"/n/otter.md"}; !slices.Equal(got, want) {
		t.Errorf("B: tag query zoology = %v, want %v (A's Put)", got, want)
	}
	if got, _ := b.TagKeywordCandidates(ctx, "otter"); !slices.Equal(got, []string{"/n/otter.md"}) {
		t.Errorf("B: TagKeywordCandidates(otter) = %v, want A's file", got)
	}

	// A embeds; B's vector lookups find the vectors.
	embedAll(t, a, embedding.SpaceTags, east)
	embedAll(t, a, embedding.SpaceContent, east)
	if got, want := nearestKeys(t, b, embedding.SpaceTags, []float32{1, 0, 0}), []string{"/n/otter.md"}; !slices.Equal(got, want) {
		t.Errorf("B: nearest tag vectors = %v, want %v (A embedded them)", got, want)
	}
	if got := nearestKeys(t, b, embedding.SpaceContent, []float32{1, 0, 0}); len(got) != 1 || got[0] != index.ChunkKey("/n/otter.md", 0) {
		t.Errorf("B: nearest chunk vectors = %v, want the otter chunk", got)
	}
	if _, ok := b.Vector(ctx, embedding.SpaceTags, "/n/otter.md"); !ok {
		t.Error("B: Vector of A's tag vector: none")
	}
	// A tag query asks TagTiers first, then Similarities of the tiers.
	tagHits(t, b, "otter")
	if s := b.Similarities(ctx, embedding.SpaceTags, []float32{1, 0, 0}, []string{"/n/otter.md"}); s[0] < 0.99 {
		t.Errorf("B: similarity to A's tag vector = %v, want 1", s[0])
	}

	// A re-tags and renames; B sees the new tags under the new path,
	// with the vectors moved.
	if err := a.Put(ctx, item("/n/otter.md", "otters hold hands\n", semfs.Tags{Task: "marine"})); err != nil {
		t.Fatal(err)
	}
	if got := tagHits(t, b, "zoology"); len(got) != 0 {
		t.Errorf("B: tag query zoology after A re-tagged = %v, want none", got)
	}
	if err := a.Rename(ctx, "/n", "/m"); err != nil {
		t.Fatal(err)
	}
	if got, want := tagHits(t, b, "marine"), []string{"/m/otter.md"}; !slices.Equal(got, want) {
		t.Errorf("B: tag query marine after A renamed = %v, want %v", got, want)
	}
	if got := nearestKeys(t, b, embedding.SpaceContent, []float32{1, 0, 0}); len(got) != 1 || got[0] != index.ChunkKey("/m/otter.md", 0) {
		t.Errorf("B: nearest chunk vectors after A renamed = %v, want the chunk under /m", got)
	}
	if got := searchPaths(t, b, "otters"); len(got) != 1 || got[0] != "/m/otter.md:otters hold hands\n" {
		t.Errorf("B: search otters after A renamed = %q, want /m/otter.md", got)
	}

	// B writes too: A sees it, and B still sees its own write and A's.
	if err := b.Put(ctx, item("/b.md", "beavers\n", semfs.Tags{Task: "marine"})); err != nil {
		t.Fatal(err)
	}
	for name, ix := range map[string]*Index{"A": a, "B": b} {
		if got, want := tagHits(t, ix, "marine"), []string{"/b.md", "/m/otter.md"}; !slices.Equal(got, want) {
			t.Errorf("%s: tag query marine = %v, want %v", name, got, want)
		}
	}

	// A removes; B forgets the file and its vectors.
	if err := a.Remove(ctx, "/m", true); err != nil {
		t.Fatal(err)
	}
	if got := tagHits(t, b, "otter"); len(got) != 0 {
		t.Errorf("B: tag query otter after A removed = %v, want none", got)
	}
	if got := nearestKeys(t, b, embedding.SpaceTags, []float32{1, 0, 0}); len(got) != 0 {
		t.Errorf("B: nearest tag vectors after A removed = %v, want none", got)
	}

	// A wipes a space (a model change); B's copy goes too.
	if err := b.Put(ctx, item("/c.md", "cormorants\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	embedAll(t, b, embedding.SpaceContent, east)
	if got := nearestKeys(t, a, embedding.SpaceContent, []float32{1, 0, 0}); len(got) != 2 {
		t.Errorf("A: nearest chunk vectors = %v, want B's two chunks", got)
	}
	if err := a.WipeVectors(ctx, embedding.SpaceContent); err != nil {
		t.Fatal(err)
	}
	if got := nearestKeys(t, b, embedding.SpaceContent, []float32{1, 0, 0}); len(got) != 0 {
		t.Errorf("B: nearest chunk vectors after A wiped them = %v, want none", got)
	}
	// Memory agrees with a fresh load.
	c := open(t, path)
	for name, ix := range map[string]*Index{"A": a, "B": b} {
		if got, want := ix.tags.Len(), c.tags.Len(); got != want {
			t.Errorf("%s: tag index holds %d files, a reopened index %d", name, got, want)
		}
		for _, s := range []string{embedding.SpaceTags, embedding.SpaceContent} {
			if got, want := ix.vecs[s].Len(), c.vecs[s].Len(); got != want {
				t.Errorf("%s: %s space holds %d vectors, a reopened index %d", name, s, got, want)
			}
		}
	}
}

// B's lookups never wait for B's own writer. A commits, then holds a
// write transaction open; B's Put waits for it (holding B's write lock).
// B's search, grep, tag query and vector lookup must still return, and
// show A's commit, while A's transaction stays open.
func TestLookupDoesNotWaitForOwnWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	a, b := open(t, path), open(t, path)
	if err := a.Put(ctx, item("/a.md", "walrus tusks\n", semfs.Tags{Task: "arctic"})); err != nil {
		t.Fatal(err)
	}
	embedAll(t, a, embedding.SpaceTags, func(string) []float32 { return []float32{0, 1, 0} })

	tx, err := a.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: A holds the write lock
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release := func() { once.Do(func() { tx.Rollback() }) }
	defer release()
	if _, err := tx.ExecContext(ctx, `UPDATE kv SET value = value WHERE key = 'postings_gen'`); err != nil {
		t.Fatal(err)
	}
	putDone := make(chan error, 1)
	go func() { putDone <- b.Put(ctx, item("/b.md", "narwhal\n", semfs.Tags{})) }()
	waitLocked(t, b) // B's Put then waits for A's transaction

	// Should the lookups wait for B's Put, the watchdog ends A's
	// transaction after 8 s (B's Put would give up after its 10 s busy
	// timeout), so they return and the test fails.
	watchdog := time.AfterFunc(8*time.Second, release)
	var got []string
	got = append(got, searchPaths(t, b, "walrus")...)
	got = append(got, grepPaths(t, b, "tusks")...)
	got = append(got, tagHits(t, b, "arctic")...)
	got = append(got, nearestKeys(t, b, embedding.SpaceTags, []float32{0, 1, 0})...)
	if !watchdog.Stop() {
		t.Fatal("B's lookups waited for B's Put, which waits for A's transaction")
	}
	if want := []string{"/a.md:walrus tusks\n", "/a.md", "/a.md", "/a.md"}; !slices.Equal(got, want) {
		t.Errorf("B's lookups = %q, want %q (A's commit)", got, want)
	}
	select {
	case err := <-putDone:
		t.Fatalf("B's Put returned (%v) while A held the write lock", err)
	default:
	}
	release()
	if err := <-putDone; err != nil {
		t.Fatal(err)
	}
	// The Put installed A's postings and its own; B sees both.
	for _, w := range []string{"narwhal", "walrus"} {
		if got := searchPaths(t, b, w); len(got) != 1 {
			t.Errorf("B: search %s = %q, want one hit", w, got)
		}
	}
	if got := grepPaths(t, b, "a"); !slices.Equal(got, []string{"/a.md", "/b.md"}) {
		t.Errorf("B: grep a = %q, want both files", got)
	}
	if r, err := b.Check(ctx, false); err != nil || len(r.Problems) > 0 {
		t.Errorf("B: Check = %v, %v", r.Problems, err)
	}
}

// waitLocked waits until ix's write lock is held (by a Put started on
// another goroutine).
func waitLocked(t *testing.T, ix *Index) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		if !ix.wmu.TryLock() {
			return
		}
		ix.wmu.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("the Put never took its write lock")
		}
		time.Sleep(time.Millisecond)
	}
}

// A lookup with nothing new costs one small SELECT: it does not re-read
// rows this process wrote itself.
func TestOwnWritesNotReread(t *testing.T) {
	ctx := context.Background()
	ix := open(t, filepath.Join(t.TempDir(), "i.db"))
	if err := ix.Put(ctx, item("/a.md", "alpha\n", semfs.Tags{Task: "t"}), item("/z.md", "zeta\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	embedAll(t, ix, embedding.SpaceContent, func(string) []float32 { return []float32{1, 0} })
	if err := ix.SetEmbedding(ctx, embedding.SpaceTags, "/a.md", index.TagText(semfs.Meta{Path: "/a.md", Tags: semfs.Tags{Task: "t"}, CreatedBy: "app"}), []float32{0, 1}); err != nil {
		t.Fatal(err)
	}
	if _, ok := ix.Vector(ctx, embedding.SpaceTags, "/a.md"); !ok {
		t.Fatal("the tag vector just set is not in memory")
	}
	if err := ix.Rename(ctx, "/a.md", "/b.md"); err != nil {
		t.Fatal(err)
	}
	if err := ix.Remove(ctx, "/b.md", false); err != nil {
		t.Fatal(err)
	}
	var head int64
	if err := ix.db.QueryRowContext(ctx, logHeadSQL).Scan(&head); err != nil {
		t.Fatal(err)
	}
	ix.view.RLock()
	seq, mem := ix.logSeq, ix.memSeq
	ix.view.RUnlock()
	if seq != head || head == 0 {
		t.Fatalf("after its own writes memory is at log seq %d, the log at %d; want equal and above 0", seq, head)
	}
	if err := ix.refresh(ctx); err != nil {
		t.Fatal(err)
	}
	ix.view.RLock()
	defer ix.view.RUnlock()
	if ix.memSeq != mem {
		t.Error("refresh re-read this process's own writes")
	}
}

// A process that fell behind more than the log keeps reloads everything.
func TestPrunedLogReloadsAll(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	a, b := open(t, path), open(t, path)
	if err := a.Put(ctx, item("/a.md", "alpha\n", semfs.Tags{Task: "kept"})); err != nil {
		t.Fatal(err)
	}
	// Drop the entries B needs (as pruning does after freshKeep more).
	if err := a.write(ctx, "test", "/", func(tx *sql.Tx) ([]memOp, error) {
		_, err := tx.ExecContext(ctx, `INSERT INTO fresh_log(path) VALUES ('/x'); DELETE FROM fresh_log WHERE path != '/x'`)
		return nil, err
	}); err != nil {
		t.Fatal(err)
	}
	if got := tagHits(t, b, "kept"); !slices.Equal(got, []string{"/a.md"}) {
		t.Errorf("B: tag query kept = %v, want /a.md (entries pruned: reload all)", got)
	}
}

// The same with a real second process: this test binary run again as
// the writer (TestFreshWriterProcess). It puts and embeds, reports
// "wrote", then holds a write transaction open until its stdin closes.
// This process's lookups see the writes; its own Put waits for the
// writer's transaction meanwhile, and its lookups still return.
func TestPeerProcessWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	b := open(t, path)
	cmd := exec.Command(os.Args[0], "-test.run=^TestFreshWriterProcess$")
	cmd.Env = append(os.Environ(), "SEMFS_FRESH_WRITER="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer process: %v\n%s", err, stderr.String())
		}
	}()
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && lines.Text() != "wrote" {
	}
	if lines.Err() != nil {
		t.Fatal(lines.Err())
	}
	putDone := make(chan error, 1)
	go func() { putDone <- b.Put(ctx, item("/mine.md", "puffin\n", semfs.Tags{})) }()
	waitLocked(t, b)
	watchdog := time.AfterFunc(8*time.Second, func() { stdin.Close() }) // see TestLookupDoesNotWaitForOwnWriter
	var got []string
	got = append(got, searchPaths(t, b, "albatross")...)
	got = append(got, tagHits(t, b, "seabirds")...)
	got = append(got, nearestKeys(t, b, embedding.SpaceContent, []float32{0, 0, 1})...)
	if !watchdog.Stop() {
		t.Fatal("lookups waited for the writer process's transaction")
	}
	if want := []string{"/p/albatross.md:albatross wings\n", "/p/albatross.md", index.ChunkKey("/p/albatross.md", 0)}; !slices.Equal(got, want) {
		t.Errorf("lookups after the writer process committed = %q, want %q", got, want)
	}
	stdin.Close()
	if err := <-putDone; err != nil {
		t.Fatal(err)
	}
	if got := searchPaths(t, b, "puffin"); len(got) != 1 {
		t.Errorf("search puffin after this process's Put = %q", got)
	}
}

// TestFreshWriterProcess is the writer of TestPeerProcessWrites when run
// by it (SEMFS_FRESH_WRITER names the index); run directly it does
// nothing.
func TestFreshWriterProcess(t *testing.T) {
	path := os.Getenv("SEMFS_FRESH_WRITER")
	if path == "" {
		return
	}
	ctx := context.Background()
	a := open(t, path)
	if err := a.Put(ctx, item("/p/albatross.md", "albatross wings\n", semfs.Tags{Task: "seabirds"})); err != nil {
		t.Fatal(err)
	}
	embedAll(t, a, embedding.SpaceContent, func(string) []float32 { return []float32{0, 0, 1} })
	tx, err := a.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE kv SET value = value WHERE key = 'postings_gen'`); err != nil {
		t.Fatal(err)
	}
	fmt.Println("wrote")
	io.Copy(io.Discard, os.Stdin) // hold the transaction until stdin closes
}

// peerChanges calls ix.PeerChanges, failing the test on an error.
func peerChanges(t *testing.T, ix *Index, since index.Cursor) ([]string, bool, index.Cursor) {
	t.Helper()
	ch, err := ix.PeerChanges(context.Background(), since)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Dirs) != 0 {
		t.Errorf("PeerChanges: Dirs %v (fresh_log names rows)", ch.Dirs)
	}
	slices.Sort(ch.Paths)
	return ch.Paths, ch.All, ch.Next
}

// PeerChanges reports to B the paths A changed, access fields included,
// and nothing when nothing changed.
func TestPeerChangesListsAccessChanges(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	a, b := open(t, path), open(t, path)
	if _, all, _ := peerChanges(t, b, 0); !all {
		t.Error("PeerChanges(0) on an empty index: all = false, want true (the zero cursor is before every change)")
	}
	if err := a.Put(ctx, item("/q3.txt", "revenue\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	paths, all, c := peerChanges(t, b, 0)
	if !all || len(paths) != 0 {
		t.Errorf("PeerChanges(0) = %v, all %v; want all", paths, all)
	}
	if paths, all, next := peerChanges(t, b, c); all || len(paths) != 0 || next != c {
		t.Errorf("nothing changed: PeerChanges = %v, all %v, cursor %d → %d; want nothing and the same cursor", paths, all, c, next)
	}
	if err := a.Put(ctx, item("/q3.txt", "revenue\n", semfs.Tags{Groups: []string{"finance"}})); err != nil {
		t.Fatal(err)
	}
	paths, all, c2 := peerChanges(t, b, c)
	if all || !slices.Equal(paths, []string{"/q3.txt"}) || c2 == c {
		t.Errorf("after A restricted /q3.txt: PeerChanges = %v, all %v, cursor %d → %d; want [/q3.txt] and a new cursor", paths, all, c, c2)
	}
	// An update of the access columns alone is logged too (the trigger
	// before fresh_files_access did not name them).
	for _, set := range []string{`groups_json = '[]'`, `public = 1`} {
		if err := a.write(ctx, "test", "/", func(tx *sql.Tx) ([]memOp, error) {
			_, err := tx.ExecContext(ctx, `UPDATE files SET `+set+` WHERE path = '/q3.txt'`)
			return nil, err
		}); err != nil {
			t.Fatal(err)
		}
		paths, all, next := peerChanges(t, b, c2)
		if all || !slices.Equal(paths, []string{"/q3.txt"}) {
			t.Errorf("after UPDATE files SET %s: PeerChanges = %v, all %v; want [/q3.txt]", set, paths, all)
		}
		c2 = next
	}
	if err := a.Rename(ctx, "/q3.txt", "/q4.txt"); err != nil {
		t.Fatal(err)
	}
	paths, _, c3 := peerChanges(t, b, c2)
	if !slices.Equal(paths, []string{"/q3.txt", "/q4.txt"}) {
		t.Errorf("after A renamed: PeerChanges = %v, want both paths", paths)
	}
	if err := a.Remove(ctx, "/q4.txt", false); err != nil {
		t.Fatal(err)
	}
	paths, _, c4 := peerChanges(t, b, c3)
	if !slices.Equal(paths, []string{"/q4.txt"}) {
		t.Errorf("after A removed: PeerChanges = %v, want [/q4.txt]", paths)
	}
	// B's own writes are left out; A's between them are not.
	if err := b.Put(ctx, item("/own.txt", "mine\n", semfs.Tags{Groups: []string{"eng"}})); err != nil {
		t.Fatal(err)
	}
	paths, all, c5 := peerChanges(t, b, c4)
	if all || len(paths) != 0 || c5 == c4 {
		t.Errorf("after B's own Put: PeerChanges = %v, all %v, cursor %d → %d; want nothing and a new cursor", paths, all, c4, c5)
	}
	if err := b.Put(ctx, item("/own.txt", "mine\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	if err := a.Put(ctx, item("/peer.txt", "theirs\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	if err := b.Remove(ctx, "/own.txt", false); err != nil {
		t.Fatal(err)
	}
	if paths, all, _ := peerChanges(t, b, c5); all || !slices.Equal(paths, []string{"/peer.txt"}) {
		t.Errorf("after B, A, B wrote: PeerChanges = %v, all %v; want [/peer.txt]", paths, all)
	}
	// Entries B needs pruned: all.
	if err := a.write(ctx, "test", "/", func(tx *sql.Tx) ([]memOp, error) {
		_, err := tx.ExecContext(ctx, `INSERT INTO fresh_log(path) VALUES ('/x'); DELETE FROM fresh_log WHERE path != '/x'`)
		return nil, err
	}); err != nil {
		t.Fatal(err)
	}
	if _, all, _ := peerChanges(t, b, c3); !all {
		t.Error("entries pruned: all = false, want true")
	}
}

// An index file made with the update trigger of before (which did not
// log changes of groups_json and public) gets the new one at Open, and
// loses the insert trigger of before (new rows are logged by the
// statement inserting them); new rows are still logged once.
func TestOldUpdateTriggerUpgraded(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	a := open(t, path)
	if err := a.Put(ctx, item("/q3.txt", "revenue\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	if _, err := a.db.ExecContext(ctx, `DROP TRIGGER fresh_files_access;
		CREATE TRIGGER fresh_files_update AFTER UPDATE OF path, created_by, task, related_apps ON files BEGIN
			INSERT INTO fresh_log(path) VALUES (old.path);
			INSERT INTO fresh_log(path) SELECT new.path WHERE new.path != old.path;
		END;
		CREATE TRIGGER fresh_files_insert AFTER INSERT ON files BEGIN
			INSERT INTO fresh_log(path) VALUES (new.path);
		END;`); err != nil {
		t.Fatal(err)
	}
	a.Close()
	b := open(t, path)
	var names []string
	rows, err := b.db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'fresh%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	rows.Close()
	if want := []string{"fresh_files_access", "fresh_files_delete"}; !slices.Equal(names, want) {
		t.Errorf("triggers after reopening an old file: %v, want %v", names, want)
	}
	_, _, c := peerChanges(t, b, 0)
	if _, err := b.db.ExecContext(ctx, `UPDATE files SET public = 1 WHERE path = '/q3.txt'`); err != nil {
		t.Fatal(err)
	}
	paths, all, c := peerChanges(t, b, c)
	if all || !slices.Equal(paths, []string{"/q3.txt"}) {
		t.Errorf("UPDATE of public in an upgraded file: PeerChanges = %v, all %v; want [/q3.txt]", paths, all)
	}
	a = open(t, path)
	if err := a.Put(ctx, item("/new.txt", "fresh\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	if paths, all, _ := peerChanges(t, b, c); all || !slices.Equal(paths, []string{"/new.txt"}) {
		t.Errorf("a new file in an upgraded file: PeerChanges = %v, all %v; want [/new.txt]", paths, all)
	}
	var n int
	if err := b.db.QueryRowContext(ctx, `SELECT count(*) FROM fresh_log WHERE path = '/new.txt'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("/new.txt logged %d times (%v), want once", n, err)
	}
}

// BenchmarkPeerChanges measures one PeerChanges call (ns/call; ns/op
// includes the Put before it) when nothing was logged since the cursor
// (idle), when this process's own Put was (own), and when another
// process's was (peer: one path to list).
//
//	go test -run '^$' -bench PeerChanges ./index/sqlite
func BenchmarkPeerChanges(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "i.db")
	x, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	y, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer y.Close()
	for i := range 1000 {
		if err := x.Put(ctx, item(fmt.Sprintf("/f%04d.md", i), "text\n", semfs.Tags{})); err != nil {
			b.Fatal(err)
		}
	}
	ch, err := x.PeerChanges(ctx, 0)
	if err != nil {
		b.Fatal(err)
	}
	c := ch.Next
	for _, bc := range []struct {
		name  string
		write *Index // nil: none
	}{{"idle", nil}, {"own", x}, {"peer", y}} {
		b.Run(bc.name, func(b *testing.B) {
			var spent time.Duration // in PeerChanges alone
			for i := 0; b.Loop(); i++ {
				if bc.write != nil {
					if err := bc.write.Put(ctx, item("/w.md", fmt.Sprintf("text %d\n", i), semfs.Tags{})); err != nil {
						b.Fatal(err)
					}
				}
				start := time.Now()
				ch, err := x.PeerChanges(ctx, c)
				spent += time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				if bc.write == y && len(ch.Paths) != 1 {
					b.Fatalf("peer: %v", ch.Paths)
				}
				c = ch.Next
			}
			b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N), "ns/call")
		})
	}
}

// A Put of many new files logs them in one batch entry (see freshSQL):
// another process lists each of them in PeerChanges and sees their tags
// at its next lookup, the writer's own PeerChanges leaves them out, and
// a batch holding a path with a newline logs each path on its own.
func TestBatchEntrySeenByPeer(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	a, b := open(t, path), open(t, path)
	_, _, cb := peerChanges(t, b, 0)
	_, _, ca := peerChanges(t, a, 0)
	if got := tagHits(t, b, "raptors"); len(got) != 0 {
		t.Fatalf("tag hits before the Put: %v", got)
	}
	var items []index.Item
	var want []string
	for i := range 300 {
		p := fmt.Sprintf("/batch/%03d.md", i)
		items = append(items, item(p, "harrier note\n", semfs.Tags{Task: "raptors"}))
		want = append(want, p)
	}
	if err := a.Put(ctx, items...); err != nil {
		t.Fatal(err)
	}
	var entries int
	if err := a.db.QueryRowContext(ctx, `SELECT count(*) FROM fresh_log WHERE seq > ?`, int64(cb)-1).Scan(&entries); err != nil || entries != 1 {
		t.Fatalf("the Put of 300 files logged %d entries (%v), want one", entries, err)
	}
	paths, all, cb2 := peerChanges(t, b, cb)
	if all || !slices.Equal(paths, want) || int64(cb2-cb) != 300 {
		t.Errorf("PeerChanges after A's batch: %d paths (first %q), all %v, cursor %d → %d; want the 300 paths and the cursor 300 further", len(paths), paths[:min(1, len(paths))], all, cb, cb2)
	}
	if got := tagHits(t, b, "raptors"); !slices.Equal(got, want) {
		t.Errorf("B's tag hits after A's batch: %d, want 300", len(got))
	}
	if paths, all, _ := peerChanges(t, a, ca); all || len(paths) != 0 {
		t.Errorf("A's own batch in A's PeerChanges: %d paths, all %v; want none", len(paths), all)
	}
	odd := "/odd\nname.md"
	if err := a.Put(ctx, item(odd, "kite\n", semfs.Tags{}), item("/batch/x.md", "kite\n", semfs.Tags{})); err != nil {
		t.Fatal(err)
	}
	if paths, all, _ := peerChanges(t, b, cb2); all || !slices.Equal(paths, []string{"/batch/x.md", odd}) {
		t.Errorf("PeerChanges after a batch with a newline in a path: %q, all %v", paths, all)
	}
}
