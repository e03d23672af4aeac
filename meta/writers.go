package meta

import (
	"sync"

	"github.com/semfs/semfs"
)

// writers tracks the files open for writing, so that a rename moves the
// path an open handle re-indexes at close: a log renamed by rotation while
// its writer keeps appending must be indexed under its new name.
type writers struct {
	mu   sync.Mutex
	open map[*writeFile]struct{}
}

func (ws *writers) add(w *writeFile) {
	ws.mu.Lock()
	if ws.open == nil {
		ws.open = map[*writeFile]struct{}{}
	}
	ws.open[w] = struct{}{}
	ws.mu.Unlock()
}

func (ws *writers) drop(w *writeFile) {
	ws.mu.Lock()
	delete(ws.open, w)
	ws.mu.Unlock()
}

// rename runs do, the base's rename of o to n, and if it succeeds moves
// every open writer at o or below it to the same place below n. Holding
// the lock across the base rename means a writer's Close either reads its
// path before the rename (and then sees it moved, see writeFile.Close) or
// after the move.
func (ws *writers) rename(o, n string, do func() error) error {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if err := do(); err != nil {
		return err
	}
	for w := range ws.open {
		w.mu.Lock()
		if semfs.HasPrefix(w.path, o) {
			w.path = n + w.path[len(o):]
		}
		w.mu.Unlock()
	}
	return nil
}

// deferClose records the close of w, a file written, by calling add with
// its path, and forgets w if add took it (false: the layer is closing).
// It holds the lock that rename holds, so that a rename either moved w
// before (add gets the new path) or finds the recorded close to move
// (closes.rename).
func (ws *writers) deferClose(w *writeFile, add func(p string) bool) (string, bool) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w.mu.Lock()
	p := w.path
	w.mu.Unlock()
	if !add(p) {
		return p, false
	}
	delete(ws.open, w)
	return p, true
}

// path returns where w is now.
func (ws *writers) path(w *writeFile) string {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.path
}
