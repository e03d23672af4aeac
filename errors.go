package semfs

import (
	"errors"
	"fmt"
	"io/fs"
)

// Sentinel errors. Every failing method returns a *fs.PathError wrapping one
// of these; match them with errors.Is. The first four are io/fs's own, so
// code written for io/fs keeps working.
var (
	ErrNotExist   = fs.ErrNotExist   // no such file or directory
	ErrExist      = fs.ErrExist      // file already exists
	ErrPermission = fs.ErrPermission // not allowed by the access policy
	ErrInvalid    = fs.ErrInvalid    // invalid path or argument

	ErrNotDir   = errors.New("not a directory")
	ErrIsDir    = errors.New("is a directory")
	ErrNotEmpty = errors.New("directory not empty")
	ErrReadOnly = errors.New("read-only file system")
	ErrQuota    = errors.New("quota exceeded")
)

// sentinels lists every sentinel in a stable order, for [Sentinel].
var sentinels = []error{
	ErrNotExist, ErrExist, ErrPermission, ErrInvalid,
	ErrNotDir, ErrIsDir, ErrNotEmpty, ErrReadOnly, ErrQuota,
}

// Sentinel returns the semfs sentinel err wraps, or nil if it wraps none.
// Front ends use it as the key of their one error-mapping table.
func Sentinel(err error) error {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return s
		}
	}
	return nil
}

// PathErr builds the one error shape of the contract. detail, if non-empty,
// is a human explanation appended after the sentinel's text; errors.Is still
// finds the sentinel.
func PathErr(op, path string, sentinel error, detail string) error {
	if detail == "" {
		return &fs.PathError{Op: op, Path: path, Err: sentinel}
	}
	return &fs.PathError{Op: op, Path: path, Err: &detailError{sentinel: sentinel, detail: detail}}
}

// detailError is a sentinel with an explanation for people.
type detailError struct {
	sentinel error
	detail   string
}

func (e *detailError) Error() string { return fmt.Sprintf("%v: %s", e.sentinel, e.detail) }
func (e *detailError) Unwrap() error { return e.sentinel }

// RewritePath returns err with the Path of its outermost *fs.PathError
// replaced by path (and its Op by op, if op is non-empty). Layers use it to
// report their own view of a path (a mount prefix added back, a host path
// removed). Errors of other shapes are wrapped as ErrInvalid-free PathErrors
// carrying the original error, so the contract's shape holds.
func RewritePath(err error, op, path string) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		out := &fs.PathError{Op: pe.Op, Path: path, Err: pe.Err}
		if op != "" {
			out.Op = op
		}
		return out
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

func errorsIsAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}
