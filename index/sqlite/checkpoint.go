package sqlite

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"time"
)

// # Checkpoints
//
// The handles that write (db, vdb) run with wal_autocheckpoint(0).
// SQLite's default (1000 pages) copies the WAL into the database file
// and syncs that file inside the commit that crosses it: in a bulk ingest
// every batch's commit did, on the single writer's path, holding wmu and
// view. Instead a goroutine checkpoints on a connection of its own (cdb)
// after commits, in PASSIVE mode (it neither waits for nor blocks writers
// and readers); a writer that begins after a checkpoint copied every
// frame starts the WAL over from its beginning, and journal_size_limit
// truncates a larger file at that writer's commit.
//
// Checkpoints do not make anything durable: a commit is on disk when it
// returns (WAL, synchronous=FULL) whether or not it was copied. They only
// keep the WAL short, so the checkpointer bounds it twice: when a PASSIVE
// checkpoint leaves more than walRestartFrames in the WAL (writers kept
// it from starting over) it runs a RESTART, and when no commit came for
// ckptIdle it runs a TRUNCATE, which empties the file. Both hold wmu
// (this process's writers wait) and wait at most ckptBusy for readers
// and other processes' writers; if they cannot, the next round tries
// again. Close checkpoints what is left (PASSIVE), and the last
// connection to the file closing checkpoints and removes the WAL.
//
// Another process opening the file runs this code too (the CLI beside a
// daemon): it checkpoints after its own commits and at its Close. Nothing
// relies on a writer checkpointing.

// walJournalLimit is the journal_size_limit of the writing handles: the
// size the WAL file is cut back to when it starts over.
const walJournalLimit = 64 << 20

// walRestartFrames is the WAL length (frames, each one page) above which
// the checkpointer forces the WAL to start over (RESTART; a variable for
// tests).
var walRestartFrames = 16384

// ckptBusy is how long an idle TRUNCATE or a RESTART waits for readers
// and writers (the busy_timeout of cdb).
const ckptBusy = 100 * time.Millisecond

// ckptIdle is how long after the last commit the checkpointer empties
// the WAL file (a variable for tests).
var ckptIdle = 2 * time.Second

// startCheckpoints starts the checkpointer on cdb.
func (ix *Index) startCheckpoints() {
	ix.ckptKick = make(chan struct{}, 1)
	ix.ckptStop = make(chan struct{})
	ix.ckptDone = make(chan struct{})
	ix.ckptKick <- struct{}{} // Open's own writes
	go ix.checkpoints()
}

// kickCheckpoint tells the checkpointer a commit happened.
func (ix *Index) kickCheckpoint() {
	if ix.ckptKick == nil {
		return
	}
	select {
	case ix.ckptKick <- struct{}{}:
	default:
	}
}

// stopCheckpoints stops the checkpointer and checkpoints what is left.
func (ix *Index) stopCheckpoints() {
	if ix.ckptStop == nil {
		return // Open failed before starting it, or Close ran
	}
	close(ix.ckptStop)
	<-ix.ckptDone
	ix.ckptStop = nil
	ix.checkpoint("PASSIVE")
}

func (ix *Index) checkpoints() {
	defer close(ix.ckptDone)
	idle := time.NewTimer(ckptIdle)
	defer idle.Stop()
	dirty := true
	for {
		select {
		case <-ix.ckptStop:
			return
		case <-ix.ckptKick:
			if log, _, ok := ix.checkpoint("PASSIVE"); ok && log > walRestartFrames {
				ix.checkpointLocked("RESTART")
			}
			dirty = true
			idle.Reset(ckptIdle)
		case <-idle.C:
			if dirty {
				ok := ix.checkpointLocked("TRUNCATE")
				dirty = !ok
				if dirty {
					idle.Reset(ckptIdle)
				}
			}
		}
	}
}

// checkpoint runs PRAGMA wal_checkpoint(mode) on cdb and returns the
// WAL's length and how much of it is copied, in frames; ok is false when
// it could not finish (readers or writers in the way, or an error).
func (ix *Index) checkpoint(mode string) (log, copied int, ok bool) {
	var busy int
	err := ix.cdb.QueryRowContext(context.Background(), `PRAGMA wal_checkpoint(`+mode+`)`).Scan(&busy, &log, &copied)
	return log, copied, err == nil && busy == 0
}

// checkpointLocked runs a checkpoint that needs the write lock
// (RESTART, TRUNCATE) holding wmu, so that it does not lose the lock to
// this process's next writer, which begins at once after a commit in a
// bulk ingest; it reports whether it finished.
func (ix *Index) checkpointLocked(mode string) bool {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	_, _, ok := ix.checkpoint(mode)
	return ok
}

// openCheckpointer opens cdb, the checkpointer's handle, from the
// writing handles' DSN.
func openCheckpointer(dsn string) (*sql.DB, error) {
	busy := "busy_timeout(" + strconv.Itoa(int(ckptBusy/time.Millisecond)) + ")"
	cdb, err := sql.Open("sqlite", strings.Replace(dsn, "busy_timeout(10000)", busy, 1))
	if err != nil {
		return nil, err
	}
	cdb.SetMaxOpenConns(1)
	return cdb, nil
}
