package daemon

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/wire"
)

// Snapshot archive format. An archive is a gzip-compressed tar holding
// data/<tree path> for every file of the backing directory, index/index.db
// (a consistent copy of the SQLite index made with VACUUM INTO),
// index/<embedding.MarkerFile> when present, and manifest.json last:
// {format, version, created, entries: [{name, size, sha256}]}. Restore
// extracts into a fresh directory beside the target, verifies the format,
// the version and every checksum, and only then swaps it in.
//
// Version 1: the layout above.
const (
	SnapshotFormat  = "semfs-snapshot"
	SnapshotVersion = 1
	manifestName    = "manifest.json"
	indexEntry      = "index/index.db"
)

// Manifest describes an archive.
type Manifest struct {
	Format  string          `json:"format"`
	Version int             `json:"version"`
	Created time.Time       `json:"created"`
	Entries []ManifestEntry `json:"entries"`
}

// ManifestEntry is one archived file.
type ManifestEntry struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Snapshot writes an archive of the running daemon's tree to out. It
// checks no caller: the control socket's op does (see opSnapshot).
func (m *Main) Snapshot(ctx context.Context, out string) (wire.SnapshotResult, error) {
	if err := m.snapshottable(); err != nil {
		return wire.SnapshotResult{}, err
	}
	if err := m.flushCloses(ctx); err != nil {
		return wire.SnapshotResult{}, err
	}
	return WriteSnapshot(ctx, out, m.Config.Data, m.Config.Index)
}

// flushCloses stores the rows of files closed just before a snapshot
// (their closes are deferred, meta.Options.CloseDelay), so that the
// archive's index holds them. An archive whose index would miss them is
// refused: the daemon keeps retrying those rows.
func (m *Main) flushCloses(ctx context.Context) error {
	if m.stack == nil || m.stack.meta == nil {
		return nil
	}
	if err := m.stack.meta.Flush(ctx); err != nil {
		return fmt.Errorf("snapshot: the index rows of recently closed files could not be stored, so the archive would miss them (%w); the daemon retries them: take the snapshot again shortly, and see semfs doctor if it keeps failing", err)
	}
	return nil
}

// snapshottable says why the daemon's tree cannot be archived, if so.
func (m *Main) snapshottable() error {
	if m.Config.IndexIsPostgres() || m.Config.Store != "" {
		return semfs.PathErr("snapshot", "/", semfs.ErrInvalid,
			"snapshots archive the embedded default (a backing directory and a SQLite index); a tree on PostgreSQL and an object store is backed up with pg_dump and the bucket's own versioning or replication")
	}
	return nil
}

// WriteSnapshot writes an archive of the backing directory dataDir and the
// index at indexPath (which may be absent) to out, atomically: a temporary
// file beside out is written, fsynced and renamed over it. It is safe while
// a daemon serves the tree; each file is captured as it is when read, and
// the index copy is a consistent SQLite snapshot.
func WriteSnapshot(ctx context.Context, out, dataDir, indexPath string) (res wire.SnapshotResult, err error) {
	out, err = filepath.Abs(out)
	if err != nil {
		return res, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".semfs-snapshot-*")
	if err != nil {
		return res, fmt.Errorf("snapshot: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if res, err = writeArchive(ctx, tmp, dataDir, indexPath); err != nil {
		return res, err
	}
	if err = tmp.Sync(); err != nil {
		return res, err
	}
	if err = tmp.Close(); err != nil {
		return res, err
	}
	if err = os.Rename(tmp.Name(), out); err != nil {
		return res, err
	}
	syncDir(filepath.Dir(out))
	res.Out = out
	return res, nil
}

// writeArchive writes the archive of dataDir and indexPath to w. The
// index copy is made in a temporary file beside the index (or in the
// system's temporary directory when that is not writable).
func writeArchive(ctx context.Context, w io.Writer, dataDir, indexPath string) (res wire.SnapshotResult, err error) {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	man := Manifest{Format: SnapshotFormat, Version: SnapshotVersion, Created: time.Now().UTC()}
	add := func(name, src string) error {
		f, err := os.Open(src)
		if err != nil {
			return err
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: int64(info.Mode().Perm()), Size: info.Size(), ModTime: info.ModTime(), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		h := sha256.New()
		n, err := io.Copy(io.MultiWriter(tw, h), io.LimitReader(f, info.Size()))
		if err != nil {
			return err
		}
		if n != info.Size() {
			return fmt.Errorf("%s shrank while being archived", name)
		}
		man.Entries = append(man.Entries, ManifestEntry{Name: name, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))})
		res.Bytes += n
		return nil
	}
	// The data first, then the index, so the index knows every archived
	// file (rows for files written in between are reconciled on boot).
	err = filepath.WalkDir(dataDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if d.IsDir() && d.Name() == ".semfs" && filepath.Dir(p) == filepath.Clean(dataDir) {
			return filepath.SkipDir // bookkeeping (an index kept inside the tree is copied below)
		}
		if !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".semfs-tmp-") {
			return nil
		}
		rel, err := filepath.Rel(dataDir, p)
		if err != nil {
			return err
		}
		if err := add("data/"+filepath.ToSlash(rel), p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed since the walk saw it
			}
			return err
		}
		res.Files++
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("snapshot: archiving data: %w", err)
	}
	if _, serr := os.Stat(indexPath); serr == nil {
		ct, cerr := os.CreateTemp(filepath.Dir(indexPath), ".semfs-snapshot-*.index")
		if cerr != nil {
			ct, cerr = os.CreateTemp("", ".semfs-snapshot-*.index")
		}
		if cerr != nil {
			return res, fmt.Errorf("snapshot: a temporary copy of the index: %w", cerr)
		}
		copyPath := ct.Name()
		ct.Close()
		os.Remove(copyPath) // VACUUM INTO makes the file itself
		defer os.Remove(copyPath)
		if err = vacuumInto(ctx, indexPath, copyPath); err != nil {
			return res, fmt.Errorf("snapshot: copying the index: %w", err)
		}
		if err = add(indexEntry, copyPath); err != nil {
			return res, fmt.Errorf("snapshot: %w", err)
		}
	}
	marker := filepath.Join(filepath.Dir(indexPath), embedding.MarkerFile)
	if _, serr := os.Stat(marker); serr == nil {
		if err = add("index/"+embedding.MarkerFile, marker); err != nil {
			return res, fmt.Errorf("snapshot: %w", err)
		}
	}
	mb, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return res, err
	}
	if err = tw.WriteHeader(&tar.Header{Name: manifestName, Mode: 0o644, Size: int64(len(mb)), ModTime: man.Created, Typeflag: tar.TypeReg}); err != nil {
		return res, err
	}
	if _, err = tw.Write(mb); err != nil {
		return res, err
	}
	if err = tw.Close(); err != nil {
		return res, err
	}
	if err = gz.Close(); err != nil {
		return res, err
	}
	return res, nil
}

// vacuumInto writes a consistent copy of the SQLite database src to dst.
func vacuumInto(ctx context.Context, src, dst string) error {
	db, err := sql.Open("sqlite", "file:"+src+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	os.Remove(dst)
	_, err = db.ExecContext(ctx, "VACUUM INTO ?", dst)
	return err
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// ReadManifest verifies the archive at in — format, version, and every
// entry's size and checksum — extracting it into staging (which must not
// exist). It returns the manifest.
func extractVerified(in, staging string) (Manifest, error) {
	var man Manifest
	f, err := os.Open(in)
	if err != nil {
		return man, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return man, fmt.Errorf("not a semfs snapshot (gzip): %w", err)
	}
	tr := tar.NewReader(gz)
	got := map[string]ManifestEntry{}
	var manBytes []byte
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return man, fmt.Errorf("corrupt archive: %w", err)
		}
		if hdr.Typeflag != tar.TypeReg {
			return man, fmt.Errorf("corrupt archive: entry %q is not a regular file", hdr.Name)
		}
		if hdr.Name == manifestName {
			if manBytes, err = io.ReadAll(io.LimitReader(tr, 64<<20)); err != nil {
				return man, fmt.Errorf("corrupt archive: %w", err)
			}
			continue
		}
		clean := path.Clean(hdr.Name)
		if clean != hdr.Name || strings.HasPrefix(clean, "../") || path.IsAbs(clean) ||
			!(strings.HasPrefix(clean, "data/") || strings.HasPrefix(clean, "index/")) {
			return man, fmt.Errorf("corrupt archive: bad entry name %q", hdr.Name)
		}
		if _, dup := got[clean]; dup {
			return man, fmt.Errorf("corrupt archive: duplicate entry %q", hdr.Name)
		}
		dst := filepath.Join(staging, filepath.FromSlash(clean))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return man, err
		}
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fs.FileMode(hdr.Mode).Perm()|0o600)
		if err != nil {
			return man, err
		}
		h := sha256.New()
		n, err := io.Copy(io.MultiWriter(out, h), tr)
		if err == nil {
			err = out.Sync()
		}
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return man, fmt.Errorf("corrupt archive: %s: %w", hdr.Name, err)
		}
		got[clean] = ManifestEntry{Name: clean, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}
	}
	if manBytes == nil {
		return man, errors.New("corrupt archive: no manifest")
	}
	if err := json.Unmarshal(manBytes, &man); err != nil {
		return man, fmt.Errorf("corrupt archive: manifest: %w", err)
	}
	if man.Format != SnapshotFormat {
		return man, fmt.Errorf("not a semfs snapshot (format %q)", man.Format)
	}
	if man.Version != SnapshotVersion {
		return man, fmt.Errorf("snapshot format version %d is not supported (this build reads version %d)", man.Version, SnapshotVersion)
	}
	if len(man.Entries) != len(got) {
		return man, fmt.Errorf("corrupt archive: manifest lists %d entries, archive holds %d", len(man.Entries), len(got))
	}
	for _, e := range man.Entries {
		g, ok := got[e.Name]
		if !ok {
			return man, fmt.Errorf("corrupt archive: %s is missing", e.Name)
		}
		if g.Size != e.Size || g.SHA256 != e.SHA256 {
			return man, fmt.Errorf("corrupt archive: checksum mismatch for %s", e.Name)
		}
	}
	return man, nil
}

// RestoreSnapshot replaces the backing directory dataDir and the index at
// indexPath with the archive in. No daemon may be serving them. The archive
// is extracted beside the targets and verified completely first; a bad
// archive changes nothing.
func RestoreSnapshot(ctx context.Context, in, dataDir, indexPath string) (Manifest, error) {
	dataDir, err := filepath.Abs(dataDir)
	if err != nil {
		return Manifest{}, err
	}
	if err := os.MkdirAll(filepath.Dir(dataDir), 0o755); err != nil {
		return Manifest{}, err
	}
	staging, err := os.MkdirTemp(filepath.Dir(dataDir), ".semfs-restore-*")
	if err != nil {
		return Manifest{}, err
	}
	defer os.RemoveAll(staging)
	man, err := extractVerified(in, staging)
	if err != nil {
		return man, fmt.Errorf("restore: %s: %w; nothing was changed", in, err)
	}
	if err := ctx.Err(); err != nil {
		return man, err
	}
	// Stage the index beside its target so that the swap is a rename.
	var newIndex, newMarker string
	if err := os.MkdirAll(filepath.Dir(indexPath), 0o755); err != nil {
		return man, err
	}
	if _, err := os.Stat(filepath.Join(staging, filepath.FromSlash(indexEntry))); err == nil {
		newIndex = indexPath + ".restore"
		if err := moveFile(filepath.Join(staging, filepath.FromSlash(indexEntry)), newIndex); err != nil {
			return man, err
		}
	}
	if _, err := os.Stat(filepath.Join(staging, "index", embedding.MarkerFile)); err == nil {
		newMarker = filepath.Join(filepath.Dir(indexPath), embedding.MarkerFile+".restore")
		if err := moveFile(filepath.Join(staging, "index", embedding.MarkerFile), newMarker); err != nil {
			return man, err
		}
	}
	newData := filepath.Join(staging, "data")
	if err := os.MkdirAll(newData, 0o755); err != nil {
		return man, err
	}
	// Swap: the old data moves aside, the new takes its place.
	old := dataDir + ".old-" + time.Now().UTC().Format("20060102T150405.000000000")
	hadOld := false
	if _, err := os.Stat(dataDir); err == nil {
		if err := os.Rename(dataDir, old); err != nil {
			return man, fmt.Errorf("restore: moving the old data aside: %w", err)
		}
		hadOld = true
	}
	if err := os.Rename(newData, dataDir); err != nil {
		if hadOld {
			os.Rename(old, dataDir)
		}
		return man, fmt.Errorf("restore: %w", err)
	}
	// The journal of deferred closes belongs to the replaced index: its
	// writers must not be stored into the restored one.
	for _, suffix := range []string{"-wal", "-shm", closesJournalSuffix} {
		os.Remove(indexPath + suffix)
	}
	if newIndex != "" {
		if err := os.Rename(newIndex, indexPath); err != nil {
			return man, fmt.Errorf("restore: installing the index: %w", err)
		}
	} else {
		os.Remove(indexPath)
	}
	marker := filepath.Join(filepath.Dir(indexPath), embedding.MarkerFile)
	if newMarker != "" {
		if err := os.Rename(newMarker, marker); err != nil {
			return man, fmt.Errorf("restore: installing the marker: %w", err)
		}
	} else {
		os.Remove(marker)
	}
	syncDir(filepath.Dir(dataDir))
	syncDir(filepath.Dir(indexPath))
	if hadOld {
		os.RemoveAll(old)
	}
	return man, nil
}

func moveFile(src, dst string) error {
	if err := os.Rename(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// SnapshotPaths lists the tree paths of data entries in a manifest, sorted.
func (m Manifest) SnapshotPaths() []string {
	var out []string
	for _, e := range m.Entries {
		if p, ok := strings.CutPrefix(e.Name, "data/"); ok {
			out = append(out, semfs.MustClean("/"+p))
		}
	}
	sort.Strings(out)
	return out
}
