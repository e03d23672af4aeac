package meta

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
)

// closeJournal records the deferred closes not stored yet in a host file
// (Options.CloseJournal), so that a process killed before their commit
// does not lose who wrote the files: the next New stores them with their
// writers. One line per close, the path and its created_by quoted; the
// file is emptied whenever nothing is pending. Lines are written, not
// synced: they outlive the process, as the files' own unsynced bytes do,
// not the machine.
type closeJournal struct {
	f *os.File
}

// openCloseJournal opens (creating) the journal at path and returns the
// closes it holds, one per path; a torn last line is ignored. A path's
// last record wins: a close recorded again was moved there by a rename
// (which replaced what the path held), and a close recorded after the
// path's row was stored cannot change the stored created_by anyway.
func openCloseJournal(path string) (*closeJournal, []closed, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("meta: opening the close journal: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("meta: reading the close journal: %w", err)
	}
	var out []closed
	at := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		d, ok := parseJournalLine(sc.Text())
		if !ok {
			continue
		}
		if i, seen := at[d.path]; seen {
			out[i] = d
			continue
		}
		at[d.path] = len(out)
		out = append(out, d)
	}
	return &closeJournal{f: f}, out, nil
}

func parseJournalLine(line string) (closed, bool) {
	qp, err := strconv.QuotedPrefix(line)
	if err != nil || len(line) <= len(qp) || line[len(qp)] != ' ' {
		return closed{}, false
	}
	p, _ := strconv.Unquote(qp)
	c, err := strconv.Unquote(line[len(qp)+1:])
	if err != nil || p == "" || p[0] != '/' {
		return closed{}, false
	}
	return closed{path: p, creator: c}, true
}

// record appends the close of p by creator.
func (j *closeJournal) record(p, creator string) error {
	_, err := j.f.WriteString(strconv.Quote(p) + " " + strconv.Quote(creator) + "\n")
	return err
}

// reset empties the journal: every close it held is stored.
func (j *closeJournal) reset() error { return j.f.Truncate(0) }

func (j *closeJournal) close() error { return j.f.Close() }
