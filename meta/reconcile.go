package meta

import (
	"context"
	"io/fs"
	"runtime"
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

// batchItems and batchBytes bound one store transaction of Reconcile.
const (
	batchItems = 256
	batchBytes = 16 << 20
)

// Reconcile brings the store in line with the base FS (files written,
// changed or removed behind the layer's back, or by a crashed daemon):
// a file whose size and mtime match its row, and whose row is not pending,
// is not read; otherwise its bytes are hashed, and re-analysed only when the
// hash changed. Rows without a file are dropped. Chunk vectors of unchanged
// chunk texts are kept, so nothing unchanged is re-embedded.
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
	}
	var jobs []job
	var gone []string
	// Merge the base's sorted file list with the store's sorted rows.
	rows := map[string]index.File{}
	if err := f.store.WalkFiles(ctx, root, func(r index.File) error {
		rows[r.Path] = r
		return nil
	}); err != nil {
		return rep, err
	}
	for p, err := range semfs.Files(ctx, f.base, root) {
		if err != nil {
			if semfs.IsAbsence(err) && root != "/" {
				break
			}
			return rep, err
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
		jobs = append(jobs, j)
	}
	for p := range rows {
		gone = append(gone, p)
	}
	for _, p := range gone {
		if err := f.store.Remove(ctx, p, false); err != nil {
			return rep, err
		}
		f.vis.drop(p)
		rep.Removed++
	}
	total := len(jobs) + rep.Unchanged
	done := rep.Unchanged
	if opts.Progress != nil {
		opts.Progress(done, total)
	}
	// Read, hash and analyse in parallel; write in batches.
	type result struct {
		item  index.Item
		kind  int // 0 added, 1 updated, 2 touched
		bytes int64
		err   error
		path  string
	}
	in := make(chan job)
	out := make(chan result)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range in {
				res := result{path: j.path}
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
					out <- res
					continue
				}
				var hash string
				if huge {
					hash = string(data[len("sha256:"):])
				} else {
					hash = hashOf(data)
				}
				switch {
				case j.rec == nil:
					res.kind = 0
				case j.rec.Hash == hash && j.rec.State != index.StatePending:
					res.kind = 2
					rec := *j.rec
					rec.Size, rec.ModTime = j.info.Size(), j.info.ModTime()
					res.item = index.Item{File: rec, TagText: index.TagText(rec.Meta)}
					out <- res
					continue
				default:
					res.kind = 1
				}
				res.item, res.err = f.item(ctx, j.path, j.info, data, huge)
				out <- res
			}
		}()
	}
	go func() {
		defer close(in)
		for _, j := range jobs {
			select {
			case in <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(out) }()
	// One writer stores a batch while the workers analyse the next: the
	// store's write lock is held by one transaction at a time anyway, and
	// analysis waiting for it left a core idle.
	batches := make(chan []index.Item, 1)
	var writeErr error
	written := make(chan struct{})
	go func() {
		defer close(written)
		for b := range batches {
			if writeErr != nil {
				continue
			}
			f.mu.Lock()
			writeErr = f.store.Put(ctx, b...)
			f.mu.Unlock()
		}
	}()
	var batch []index.Item
	var batchSize int64
	var firstErr error
	flush := func() {
		if len(batch) > 0 {
			batches <- batch
		}
		batch, batchSize = nil, 0
	}
	for res := range out {
		done++
		if opts.Progress != nil {
			opts.Progress(done, total)
		}
		if res.err != nil {
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
		batch = append(batch, res.item)
		batchSize += res.bytes
		if len(batch) >= batchItems || batchSize >= batchBytes {
			flush()
		}
	}
	flush()
	close(batches)
	<-written
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	if firstErr == nil {
		firstErr = writeErr
	}
	return rep, firstErr
}

// Reindex drops all derived data, then rebuilds it from the base's bytes
// and the metadata of record, and reconciles with the base.
func (f *FS) Reindex(ctx context.Context, opts ReconcileOptions) (ReconcileReport, error) {
	if err := f.store.MarkAllPending(ctx); err != nil {
		return ReconcileReport{}, err
	}
	return f.Reconcile(ctx, opts)
}
