package semfstest

import (
	"bytes"
	"io"
	"os"
	"strings"

	"github.com/semfs/semfs"
)

const (
	osRDONLY = os.O_RDONLY
	osWRONLY = os.O_WRONLY
	osRDWR   = os.O_RDWR
	osCreate = os.O_CREATE | os.O_WRONLY
	osExcl   = os.O_EXCL
	osTrunc  = os.O_TRUNC
	osAppend = os.O_APPEND
)

func testOpenFile(e *env) {
	fsys := e.empty()
	if e.cfg.noOpenFile {
		e.write(fsys, "/f", "f")
		before := e.state(fsys)
		_, err := semfs.OpenFile(e.ctx, fsys, "/f", osRDWR, 0)
		e.wantErr(err, semfs.ErrReadOnly, "OpenFile on a tree without it", "/f")
		e.sameState(fsys, before, "a refused OpenFile")
		return
	}
	e.write(fsys, "/exists", "old contents")
	_, err := semfs.OpenFile(e.ctx, fsys, "/exists", osCreate|osExcl, 0o644)
	e.wantErr(err, semfs.ErrExist, "OpenFile(O_CREATE|O_EXCL) of an existing file", "/exists")
	e.wantContent(fsys, "/exists", "old contents")

	f, err := semfs.OpenFile(e.ctx, fsys, "/new", osCreate|osExcl, 0o644)
	if err != nil {
		e.Fatalf("OpenFile(O_CREATE|O_EXCL) of a new file: %v", err)
	}
	if _, err := f.Write([]byte("fresh")); err != nil {
		e.Fatalf("Write: %v", err)
	}
	if err := f.Close(); err != nil {
		e.Fatalf("Close: %v", err)
	}
	e.wantContent(fsys, "/new", "fresh")

	_, err = semfs.OpenFile(e.ctx, fsys, "/missing", osRDWR, 0)
	e.wantErr(err, semfs.ErrNotExist, "OpenFile without O_CREATE of a missing file", "/missing")
	_, err = semfs.OpenFile(e.ctx, fsys, "/nodir/x", osCreate, 0o644)
	e.wantErr(err, semfs.ErrNotExist, "OpenFile(O_CREATE) with a missing parent", "/nodir/x")
	e.mkdirAll(fsys, "/dir")
	_, err = semfs.OpenFile(e.ctx, fsys, "/dir", osRDWR, 0)
	e.wantErr(err, semfs.ErrIsDir, "OpenFile of a directory", "/dir")
	_, err = semfs.OpenFile(e.ctx, fsys, "/dir", osRDONLY, 0)
	e.wantErr(err, semfs.ErrIsDir, "OpenFile(O_RDONLY) of a directory", "/dir")

	// O_TRUNC empties; without it the old bytes stay past what is written.
	f = e.openFile(fsys, "/exists", osWRONLY)
	f.Write([]byte("OLD"))
	f.Close()
	e.wantContent(fsys, "/exists", "OLD contents")
	f = e.openFile(fsys, "/exists", osWRONLY|osTrunc)
	f.Write([]byte("new"))
	f.Close()
	e.wantContent(fsys, "/exists", "new")

	// O_APPEND writes at the end, whatever the offset, from every handle.
	a1 := e.openFile(fsys, "/log", osCreate|osAppend)
	a2 := e.openFile(fsys, "/log", osWRONLY|osAppend)
	a1.Write([]byte("one;"))
	a2.Write([]byte("two;"))
	a1.Seek(0, io.SeekStart)
	a1.Write([]byte("three;"))
	a1.Close()
	a2.Close()
	e.wantContent(fsys, "/log", "one;two;three;")

	// A read-only handle refuses writes; a write-only handle refuses reads.
	r := e.openFile(fsys, "/log", osRDONLY)
	if _, err := r.Write([]byte("x")); err == nil {
		e.Errorf("Write on an O_RDONLY file succeeded")
	} else {
		e.checkShape(err, "Write on an O_RDONLY file", "/log")
	}
	r.Close()
	w := e.openFile(fsys, "/log", osWRONLY)
	if _, err := w.Read(make([]byte, 1)); err == nil {
		e.Errorf("Read on an O_WRONLY file succeeded")
	} else {
		e.checkShape(err, "Read on an O_WRONLY file", "/log")
	}
	w.Close()
	e.wantContent(fsys, "/log", "one;two;three;")
}

func (e *env) openFile(fsys semfs.FS, p string, flag int) semfs.RWFile {
	e.Helper()
	f, err := semfs.OpenFile(e.ctx, fsys, p, flag, 0o644)
	if err != nil {
		e.Fatalf("OpenFile(%q, %#x): %v", p, flag, err)
	}
	return f
}

func testOpenFileReadWrite(e *env) {
	if e.cfg.noOpenFile {
		return // covered by OpenFile
	}
	fsys := e.empty()
	f := e.openFile(fsys, "/rw", osRDWR|os.O_CREATE)
	model := []byte{}
	writeAt := func(data string, off int) {
		e.Helper()
		n, err := f.WriteAt([]byte(data), int64(off))
		if err != nil || n != len(data) {
			e.Fatalf("WriteAt(%d bytes at %d) = %d, %v", len(data), off, n, err)
		}
		if end := off + len(data); end > len(model) {
			model = append(model, make([]byte, end-len(model))...)
		}
		copy(model[off:], data)
	}
	verify := func(step string) {
		e.Helper()
		buf := bytes.Repeat([]byte{0xAA}, len(model)+10) // holes must read as zeros, not as what the buffer held
		n, err := f.ReadAt(buf, 0)
		if n != len(model) || err != io.EOF || !bytes.Equal(buf[:n], model) {
			e.Errorf("after %s: ReadAt(all) = %d, %v; want %d bytes, io.EOF, matching contents %v", step, n, err, len(model), bytes.Equal(buf[:n], model))
		}
		info, err := f.Stat()
		if err != nil || info.Size() != int64(len(model)) {
			e.Errorf("after %s: open file Stat = %v, %v; want size %d", step, info, err, len(model))
		}
		e.wantContent(fsys, "/rw", string(model))
	}
	writeAt("hello", 0)
	verify("a first WriteAt")
	writeAt("world", 100) // beyond EOF: the gap reads as zeros
	verify("WriteAt beyond EOF")
	big := pattern(3*65536 + 100)
	writeAt(big, 65530) // across chunk boundaries of common sizes
	verify("a large WriteAt across 64 KiB boundaries")
	writeAt("MID", 2*65536-1)
	verify("a small WriteAt in the middle of a large file")

	// ReadAt at and past the end.
	buf := make([]byte, 4)
	if n, err := f.ReadAt(buf, int64(len(model)-2)); n != 2 || err != io.EOF || string(buf[:2]) != string(model[len(model)-2:]) {
		e.Errorf("ReadAt across EOF = %d, %v; want 2, io.EOF", n, err)
	}
	if n, err := f.ReadAt(buf, int64(len(model)+100)); n != 0 || err != io.EOF {
		e.Errorf("ReadAt past EOF = %d, %v; want 0, io.EOF", n, err)
	}

	// Seek and Read / Write.
	if off, err := f.Seek(100, io.SeekStart); err != nil || off != 100 {
		e.Errorf("Seek(100, SeekStart) = %d, %v", off, err)
	}
	got := make([]byte, 5)
	if _, err := io.ReadFull(f, got); err != nil || string(got) != string(model[100:105]) {
		e.Errorf("Read after Seek = %q, %v; want %q", got, err, model[100:105])
	}
	if off, err := f.Seek(-5, io.SeekCurrent); err != nil || off != 100 {
		e.Errorf("Seek(-5, SeekCurrent) = %d, %v; want 100", off, err)
	}
	if _, err := f.Write([]byte("WORLD")); err != nil {
		e.Fatalf("Write after Seek: %v", err)
	}
	copy(model[100:], "WORLD")
	if off, err := f.Seek(0, io.SeekEnd); err != nil || off != int64(len(model)) {
		e.Errorf("Seek(0, SeekEnd) = %d, %v; want %d", off, err, len(model))
	}
	if n, err := f.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		e.Errorf("Read at EOF = %d, %v; want 0, io.EOF", n, err)
	}
	if _, err := f.Seek(-1, io.SeekStart); err == nil {
		e.Errorf("Seek to a negative offset succeeded")
	}
	verify("Seek + Write")

	// Truncate shrinks and grows; grown bytes are zeros, also where old
	// bytes used to be.
	if err := f.Truncate(70000); err != nil {
		e.Fatalf("Truncate(70000): %v", err)
	}
	model = model[:70000]
	verify("Truncate shrink")
	if err := f.Truncate(3); err != nil {
		e.Fatalf("Truncate(3): %v", err)
	}
	model = model[:3]
	verify("Truncate shrink into the first chunk")
	if err := f.Truncate(200000); err != nil {
		e.Fatalf("Truncate(200000): %v", err)
	}
	model = append(model, make([]byte, 200000-3)...)
	verify("Truncate grow")
	if err := f.Sync(); err != nil {
		e.Errorf("Sync: %v", err)
	}
	if err := f.Close(); err != nil {
		e.Errorf("Close: %v", err)
	}
	for name, op := range map[string]func() error{
		"Read":     func() error { _, err := f.Read(make([]byte, 1)); return err },
		"ReadAt":   func() error { _, err := f.ReadAt(make([]byte, 1), 0); return err },
		"Write":    func() error { _, err := f.Write([]byte("x")); return err },
		"WriteAt":  func() error { _, err := f.WriteAt([]byte("x"), 0); return err },
		"Truncate": func() error { return f.Truncate(0) },
	} {
		err := op()
		if err == nil {
			e.Errorf("%s after Close succeeded", name)
			continue
		}
		e.checkShape(err, name+" after Close", "/rw")
	}
	e.wantContent(fsys, "/rw", string(model))

	// A handle sees the file written through another.
	e.write(fsys, "/shared", strings.Repeat("a", 10))
	h := e.openFile(fsys, "/shared", osRDWR)
	defer h.Close()
	h2 := e.openFile(fsys, "/shared", osRDWR)
	h2.WriteAt([]byte("BB"), 2)
	h2.Close()
	b := make([]byte, 10)
	if _, err := h.ReadAt(b, 0); err != nil || string(b) != "aaBBaaaaaa" {
		e.Errorf("ReadAt after a write through another handle = %q, %v; want aaBBaaaaaa", b, err)
	}
}
