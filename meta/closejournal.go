package meta

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/semfs/semfs"
)

// closeJournal records the deferred closes not stored yet in a host file
// (Options.CloseJournal), so that a process killed before their commit
// does not lose who wrote the files: the next New stores them with their
// writers. One line per event: a close is its path and its created_by,
// quoted; a removal (Remove, or the source and the destination of a
// Rename) is its quoted path and "-", and cancels the closes recorded
// before it at or below that path. The file is emptied whenever nothing
// is pending and rewritten with only the pending closes once stored ones
// dominate it. Lines are written, not synced: they outlive the process,
// as the files' own unsynced bytes do, not the machine.
type closeJournal struct {
	f     *os.File
	lines int // lines written since it was last emptied or rewritten
}

// openCloseJournal opens (creating) the journal at path and returns the
// closes it holds, one per path, in the order closed. A path's first
// close after its last removal wins: as in the process that wrote it, the
// first writer names the file's creator. A torn last line and a line
// whose path is not a clean tree path are skipped (bad counts them).
func openCloseJournal(path string) (*closeJournal, []closed, error) {
	j, left, _, err := openCloseJournalBad(path)
	return j, left, err
}

func openCloseJournalBad(path string) (*closeJournal, []closed, int, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("meta: opening the close journal: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, nil, 0, fmt.Errorf("meta: reading the close journal: %w", err)
	}
	left, bad := replayJournal(data)
	return &closeJournal{f: f, lines: bytes.Count(data, []byte("\n"))}, left, bad, nil
}

// replayJournal returns the closes data records and how many lines it
// skipped as malformed.
func replayJournal(data []byte) ([]closed, int) {
	var out []closed
	at := map[string]int{}
	bad := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		d, removal, ok := parseJournalLine(sc.Text())
		switch {
		case !ok:
			bad++
		case removal:
			kept := out[:0]
			for _, e := range out {
				if !semfs.HasPrefix(e.path, d.path) {
					kept = append(kept, e)
				}
			}
			clear(out[len(kept):])
			out = kept
			clear(at)
			for i, e := range out {
				at[e.path] = i
			}
		default:
			if _, seen := at[d.path]; !seen {
				at[d.path] = len(out)
				out = append(out, d)
			}
		}
	}
	return out, bad
}

// parseJournalLine parses a close (removal false) or a removal line.
func parseJournalLine(line string) (d closed, removal, ok bool) {
	qp, err := strconv.QuotedPrefix(line)
	if err != nil || len(line) <= len(qp) || line[len(qp)] != ' ' {
		return closed{}, false, false
	}
	p, _ := strconv.Unquote(qp)
	// Only clean paths are written: anything else is not ours.
	if c, err := semfs.Clean("replay", p); err != nil || c != p || p[0] != '/' {
		return closed{}, false, false
	}
	rest := line[len(qp)+1:]
	if rest == "-" {
		return closed{path: p}, true, true
	}
	c, err := strconv.Unquote(rest)
	if err != nil {
		return closed{}, false, false
	}
	return closed{path: p, creator: c}, false, true
}

// record appends the close of p by creator.
func (j *closeJournal) record(p, creator string) error {
	j.lines++
	_, err := j.f.WriteString(strconv.Quote(p) + " " + strconv.Quote(creator) + "\n")
	return err
}

// removed appends the removal of p: the closes recorded before at or
// below p are moot.
func (j *closeJournal) removed(p string) error {
	j.lines++
	_, err := j.f.WriteString(strconv.Quote(p) + " -\n")
	return err
}

// reset empties the journal: every close it held is stored.
func (j *closeJournal) reset() error {
	j.lines = 0
	return j.f.Truncate(0)
}

// rewrite replaces the journal with one line per close of keep: it writes
// a new file beside it and renames it over, so that a crash leaves either
// journal whole.
func (j *closeJournal) rewrite(keep []closed) error {
	name := j.f.Name()
	tmp, err := os.CreateTemp(filepath.Dir(name), filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	for _, d := range keep {
		buf.WriteString(strconv.Quote(d.path) + " " + strconv.Quote(d.creator) + "\n")
	}
	if _, err = tmp.Write(buf.Bytes()); err == nil {
		err = tmp.Chmod(0o600)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		// The new journal is in place; appending to the old handle
		// would write to the unlinked file.
		return err
	}
	j.f.Close()
	j.f, j.lines = f, len(keep)
	return nil
}

func (j *closeJournal) close() error { return j.f.Close() }
