package semfs

import (
	"context"
	"io"
	"io/fs"
)

// ReadFileFS is implemented by file systems that read a whole file more
// cheaply than Open + Read.
type ReadFileFS interface {
	FS
	ReadFile(ctx context.Context, name string) ([]byte, error)
}

// ReadFile reads the whole file name. It uses ReadFileFS when fsys has it
// and otherwise opens and reads the file.
func ReadFile(ctx context.Context, fsys FS, name string) ([]byte, error) {
	p, err := Clean("read", name)
	if err != nil {
		return nil, err
	}
	if r, ok := fsys.(ReadFileFS); ok {
		return r.ReadFile(ctx, p)
	}
	f, err := fsys.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var size int64
	if info, err := f.Stat(); err == nil {
		size = info.Size()
	}
	buf := make([]byte, 0, size+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, RewritePath(err, "read", p)
		}
	}
}

// ReadAtFile is a file that supports random-access reads. Backends return
// files implementing it where they can (memfs, hostfs, objfs).
type ReadAtFile interface {
	fs.File
	io.ReaderAt
}
