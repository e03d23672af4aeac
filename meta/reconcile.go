package meta

import (
	"cmp"
	"context"
	"io/fs"
	"maps"
	"runtime"
	"slices"
	"sync"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/index"
)

// ReconcileReport says what Reconcile changed.
type ReconcileReport struct {
	Files     int   `json:"files"`     // regular files in the base
	Added     int   `json:"added"`     // files that had no row
	Updated   int   `json:"updated"`   // files whose bytes changed
	Touched   int   `json:"touched"`   // size or mtime changed, same bytes
	Unchanged int   `json:"unchanged"` // size and mtime equal: not read
	Removed   int   `json:"removed"`   // rows whose file is gone
	Bytes     int64 `json:"bytes"`     // bytes read and analysed
}

// ReconcileOptions tune Reconcile.
type ReconcileOptions struct {
	// Root limits the walk to a subtree (default "/").
	Root string
	// Progress, if set, is called after each file with the number done and
	// the total.
	Progress func(done, total int)
}

// ticketRun is how many files Reconcile takes tickets for at a time.
const ticketRun = 256

// batchItems and batchBytes bound one store transaction of Reconcile.
// Small files fill batches by count: each batch is a postings segment per
// kind (to merge later) and a commit, and 8192 files cost about a tenth
// less CPU than 1024 on 100 000 notes of 440 bytes. The first batch holds
// firstBatch files and each next one twice as many as the one before, up
// to batchItems: the single writer idles until the first batch is read
// and prepared, and a full batch first kept it idle for a tenth of an
// ingest of 100 000 notes.
var (
	batchItems = 8192     // a test lowers it to write many batches
	batchBytes = 16 << 20 // bytes read
	firstBatch = 512      // a test lowers it
)

// Reconcile brings the store in line with the base FS (files written,
// changed or removed behind the layer's back, or by a crashed daemon):
// a file whose size and mtime match its row, and whose row is not pending,
// is not read; otherwise its bytes are hashed, and re-analysed only when the
// hash changed. Rows without a file are dropped. Chunk vectors of unchanged
// chunk texts are kept, so nothing unchanged is re-embedded. A file's row
// keeps its tags, groups and public flag as read in the transaction that
// writes the new bytes' fields (over an index.UpdatingStore), so what
// another process sets meanwhile is not written over.
func (f *FS) Reconcile(ctx context.Context, opts ReconcileOptions) (ReconcileReport, error) {
	var rep ReconcileReport
	root := "/"
	if opts.Root != "" {
		r, err := semfs.Clean("reconcile", opts.Root)
		if err != nil {
			return rep, err
		}
		root = r
	}
	type job struct {
		path string
		info fs.FileInfo
		rec  *index.File
		// ticket orders the save of this file with the layer's saves of
		// the same path: taken before the read, released once the row is
		// stored (or not), so that the older bytes of two saves never end
		// up in the row.
		ticket uint64
	}
	// Merge the base's sorted file list with the store's sorted rows.
	rows := map[string]index.File{}
	if err := f.store.WalkFiles(ctx, root, func(r index.File) error {
		rows[r.Path] = r
		return nil
	}); err != nil {
		return rep, err
	}
	// walk lists the base's files, counting them in rep, and emits those
	// to read; it leaves in rows the rows that have no file.
	walk := func(emit func(job)) error {
		for p, err := range semfs.Files(ctx, f.base, root) {
			if err != nil {
				if semfs.IsAbsence(err) && root != "/" {
					break
				}
				return err
			}
			if f.opts.Ignore(p) {
				continue
			}
			info, err := f.base.Stat(ctx, p)
			if err != nil {
				continue // gone meanwhile
			}
			rep.Files++
			j := job{path: p, info: info}
			if r, ok := rows[p]; ok {
				delete(rows, p)
				if r.Size == info.Size() && r.ModTime.Equal(info.ModTime()) && r.State != index.StatePending && r.Hash != "" {
					rep.Unchanged++
					continue
				}
				j.rec = &r
			}
			emit(j)
		}
		return nil
	}
	// removeGone drops the rows whose files the walk did not find.
	removeGone := func() error {
		n, err := f.removeGone(ctx, rows)
		rep.Removed += n
		return err
	}
	// With Progress, the walk ends before the first read, so that the
	// total is known. Without, the workers read the files the walk
	// finds as it goes: a walk of 100 000 files is a few tenths of a
	// second on one core, while the other would idle.
	var jobs []job
	done, total := 0, 0
	if opts.Progress != nil {
		if err := cmp.Or(walk(func(j job) { jobs = append(jobs, j) }), ctx.Err()); err != nil {
			return rep, err
		}
		if err := removeGone(); err != nil {
			return rep, err
		}
		total = len(jobs) + rep.Unchanged
		done = rep.Unchanged
		opts.Progress(done, total)
	}
	// Read, hash and analyse in parallel; write in batches.
	// read reads, hashes and analyses the file of j.
	read := func(j job) analysed {
		res := analysed{path: j.path, info: j.info, ticket: j.ticket}
		huge := j.info.Size() > index.MaxIndexBytes
		var data []byte
		var err error
		if huge {
			data, err = hashOnly(ctx, f.base, j.path)
		} else {
			data, err = semfs.ReadFile(ctx, f.base, j.path)
			res.bytes = int64(len(data))
		}
		if err != nil {
			res.err = err
			return res
		}
		switch {
		case huge:
			res.hash = string(data[len("sha256:"):])
		default:
			res.hash = hashOf(data)
		}
		switch {
		case j.rec == nil:
			res.kind = 0
		case j.rec.Hash == res.hash && j.rec.State != index.StatePending:
			res.kind = 2
			return res
		default:
			res.kind, res.walked = 1, j.rec.Hash
		}
		if huge {
			res.content, res.state, res.reason = &index.Content{}, index.StateSkipped, index.ReasonTooLarge
		} else {
			res.content, res.state, res.reason = index.Analyze(j.path, data)
		}
		return res
	}
	// Jobs go to the workers, and their results come back, a run at a
	// time: two channel handoffs per file, each waking a goroutine, were
	// a tenth of the CPU of an ingest of small files.
	in := make(chan []job)
	out := make(chan []analysed)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for run := range in {
				res := make([]analysed, len(run))
				for i, j := range run {
					res[i] = read(j)
				}
				out <- res
			}
		}()
	}
	walked := make(chan error, 1)
	go func() {
		defer close(in)
		// Runs' tickets are taken under one lock.
		var run []job
		paths := make([]string, 0, ticketRun)
		flush := func() {
			if len(run) == 0 {
				return
			}
			paths = paths[:0]
			for _, j := range run {
				paths = append(paths, j.path)
			}
			first := f.tickets.takeAll(paths)
			for i := range run {
				run[i].ticket = first + uint64(i)
			}
			select {
			case in <- run:
			case <-ctx.Done():
				for _, j := range run {
					f.tickets.release(j.path)
				}
			}
			run = make([]job, 0, ticketRun)
		}
		send := func(j job) {
			if run = append(run, j); len(run) == ticketRun {
				flush()
			}
		}
		var err error
		if opts.Progress != nil {
			for _, j := range jobs {
				send(j)
			}
		} else if err = walk(send); err == nil && ctx.Err() == nil {
			// Only after a whole walk: rows left then have no file.
			err = removeGone()
		}
		flush()
		walked <- err
	}()
	go func() { wg.Wait(); close(out) }()
	// One writer stores a batch while the workers analyse the next: the
	// store's write lock is held by one transaction at a time anyway, and
	// analysis waiting for it left a core idle. A store that prepares its
	// writes (index.PreparingStore: the SQLite store builds postings on
	// every core) prepares the next batch meanwhile, so the single writer
	// is not left alone on one core while the other idles.
	batches := make(chan []analysed, 1)
	prepared := make(chan preparedBatch, 1)
	var writeErr error
	written := make(chan struct{})
	go func() {
		defer close(prepared)
		ps, ok := f.store.(index.PreparingStore)
		for b := range batches {
			p := preparedBatch{batch: b}
			if ok {
				p.update = ps.PrepareUpdate(provisionalItems(b))
			}
			prepared <- p
		}
	}()
	go func() {
		defer close(written)
		for p := range prepared {
			if writeErr == nil {
				writeErr = f.storeAnalysed(ctx, p.batch, p.update)
			}
			f.tickets.releaseAll(len(p.batch), func(i int) string { return p.batch[i].path })
		}
	}()
	var batch []analysed
	var batchSize int64
	var firstErr error
	limit := min(firstBatch, batchItems)
	flush := func() {
		if len(batch) > 0 {
			batches <- batch
			limit = min(2*limit, batchItems)
		}
		batch, batchSize = nil, 0
	}
	for run := range out {
		for _, res := range run {
			done++
			if opts.Progress != nil {
				opts.Progress(done, total)
			}
			if res.err != nil {
				f.tickets.release(res.path)
				if semfs.IsAbsence(res.err) {
					continue
				}
				if firstErr == nil {
					firstErr = res.err
				}
				continue
			}
			switch res.kind {
			case 0:
				rep.Added++
			case 1:
				rep.Updated++
			case 2:
				rep.Touched++
			}
			rep.Bytes += res.bytes
			batch = append(batch, res)
			batchSize += res.bytes
			if len(batch) >= limit || batchSize >= int64(batchBytes) {
				flush()
			}
		}
	}
	flush()
	close(batches)
	<-written
	walkErr := <-walked
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	return rep, cmp.Or(walkErr, firstErr, writeErr)
}

// Reindex drops all derived data, then rebuilds it from the base's bytes
// and the metadata of record, and reconciles with the base.
func (f *FS) Reindex(ctx context.Context, opts ReconcileOptions) (ReconcileReport, error) {
	if err := f.store.MarkAllPending(ctx); err != nil {
		return ReconcileReport{}, err
	}
	return f.Reconcile(ctx, opts)
}

// analysed is what a Reconcile worker found out about one file.
type analysed struct {
	path  string
	info  fs.FileInfo
	kind  int // 0 added, 1 updated, 2 touched (same bytes: content is nil)
	bytes int64
	hash  string
	// ticket orders this save with the layer's saves of the same path
	// (taken before the bytes were read).
	ticket uint64
	// walked is the row's hash when the walk saw it (updated files): a
	// different hash at store time means the layer rewrote it meanwhile.
	walked string
	err    error
	// The file's new derived data, state and skip reason.
	content       *index.Content
	state, reason string
}

// preparedBatch is a batch of analysed files with, if the store prepares
// its writes, the write prepared for it.
type preparedBatch struct {
	batch  []analysed
	update func(ctx context.Context, paths []string, build func(map[string]index.File) ([]index.Item, error)) error
}

// provisionalItems are the items storeAnalysed will most likely write for
// batch — every file, with its content — as far as a store's
// PrepareUpdate reads them (paths and contents). When files are skipped
// or changed meanwhile, the store analyses the final items again.
func provisionalItems(batch []analysed) []index.Item {
	items := make([]index.Item, len(batch))
	for i, a := range batch {
		items[i].File.Path = a.path
		if a.kind != 2 {
			items[i].Content = a.content
		}
	}
	return items
}

// storeAnalysed writes a batch of analysed files in one transaction,
// update if the store prepared one (index.PreparingStore). Each file's
// row is built from the stored one as read in that transaction, when the
// store can (index.UpdatingStore), so tags set meanwhile, by this process
// or another, are kept: another process's change of a row (its groups,
// say) commits before the read or waits for the write. A file whose save
// through the layer read its bytes after this batch did, and was
// committed, is skipped; a save through the layer that read them before
// is dropped at its commit (commitGroup), as this batch's tickets are
// recorded as committed.
func (f *FS) storeAnalysed(ctx context.Context, batch []analysed, update func(context.Context, []string, func(map[string]index.File) ([]index.Item, error)) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	// A file that had no row is written only if it is still there: one
	// removed through the layer since it was read must not come back
	// (the layer removes bytes before the row). The base is asked before
	// the write transaction, so that it is not held meanwhile.
	present := make([]bool, len(batch))
	paths := make([]string, len(batch))
	for i, a := range batch {
		paths[i] = a.path
		if a.kind == 0 {
			_, err := f.base.Stat(ctx, a.path)
			present[i] = err == nil
		}
	}
	var stored []*analysed // the file of each item
	build := func(rows map[string]index.File) ([]index.Item, error) {
		items := make([]index.Item, 0, len(batch))
		stored = make([]*analysed, 0, len(batch))
		for i := range batch {
			a := &batch[i]
			if f.tickets.stale(a.path, a.ticket) {
				continue // stored through the layer from bytes read later
			}
			rec, ok := rows[a.path]
			mtime := a.info.ModTime()
			if a.kind == 2 {
				if !ok || rec.Hash != a.hash {
					continue // removed or rewritten meanwhile
				}
				rec.Size, rec.ModTime = a.info.Size(), mtime
				items = append(items, index.Item{File: rec, TagText: index.TagText(rec.Meta)})
				stored = append(stored, a)
				continue
			}
			switch {
			case a.kind == 1 && (!ok || rec.Hash != a.walked):
				continue // removed or rewritten meanwhile
			case a.kind == 0 && ok:
				continue // written meanwhile: its row is newer
			case a.kind == 0 && !present[i]:
				continue // removed meanwhile
			case a.kind == 0:
				// Written behind our back: the writer is unknown. A save
				// through the layer in flight (a deferred close of bytes
				// older than ours, to be dropped) names it.
				rec = index.File{Meta: semfs.Meta{Path: a.path, CreatedBy: f.tickets.creator(a.path, ""), CreatedAt: mtime.UTC(), UpdatedAt: mtime.UTC()}}
			}
			if rec.Hash != a.hash {
				rec.UpdatedAt = mtime.UTC()
			}
			rec.Size, rec.Hash, rec.ModTime, rec.State, rec.Reason = a.info.Size(), a.hash, mtime, a.state, a.reason
			items = append(items, index.Item{File: rec, TagText: index.TagText(rec.Meta), Content: a.content})
			stored = append(stored, a)
		}
		return items, nil
	}
	var err error
	if update != nil {
		err = update(ctx, paths, build)
	} else {
		err = f.update(ctx, paths, build)
	}
	if err != nil {
		return err
	}
	for _, a := range stored {
		f.tickets.committed(a.path, a.ticket)
	}
	return nil
}

// goneRun is how many rows removeGone removes in one transaction: at
// most the paths a PostgreSQL write locks one by one (more take the lock
// of every path, and other writers wait for the run).
const goneRun = 256

// removeGone drops the rows of files the walk did not find (rows, read
// before it) and returns how many it dropped. Over an
// index.RemovingStore, a row goes only if it is still, in the write
// transaction, the row read before the walk and no file stands at its
// path now: another process may have written the file after the walk
// passed it, and its row (its groups) must stay. Other stores drop the
// rows without a condition.
func (f *FS) removeGone(ctx context.Context, rows map[string]index.File) (int, error) {
	rs, ok := f.store.(index.RemovingStore)
	if !ok {
		n := 0
		for p := range rows {
			if err := f.store.Remove(ctx, p, false); err != nil {
				return n, err
			}
			f.vis.drop(p)
			n++
		}
		return n, nil
	}
	paths := slices.Sorted(maps.Keys(rows))
	n := 0
	for len(paths) > 0 {
		run := paths[:min(len(paths), goneRun)]
		paths = paths[len(run):]
		// Under f.mu, as the layer's removals: a save of this process
		// (which stats the file, then writes its row, under f.mu) is
		// then wholly before or after, and its restriction is not
		// dropped from memory after it was set. The base is asked
		// before the write transaction, so that it is not held
		// meanwhile: a file written after the stat has a newer row by
		// the transaction, or gets one after it.
		f.mu.Lock()
		absent := run[:0:0]
		for _, p := range run {
			if f.absent(ctx, p) {
				absent = append(absent, p)
			}
		}
		var removed []string
		err := rs.RemoveIf(ctx, absent, func(stored map[string]index.File) ([]string, error) {
			removed = removed[:0]
			for _, p := range absent {
				if s, ok := stored[p]; ok && sameRow(rows[p].Meta, s.Meta) {
					removed = append(removed, p)
				}
			}
			return removed, nil
		})
		if err == nil {
			f.vis.dropEach(removed)
			n += len(removed)
		}
		f.mu.Unlock()
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
