// Package wire holds the versioned types of the semfs control socket: a
// Unix socket carrying one JSON object per line in each direction.
//
// A client sends a [Request]; the daemon answers each with a [Response]
// carrying the same ID, in order. Args and Result are the op's own types,
// listed with the Op constants below. A failed request carries an [Error]
// whose Code is one of the Code constants; [Error.Err] turns it back into
// the contract's error shape (*fs.PathError wrapping a semfs sentinel), so
// errors.Is works across the socket.
//
// # Versions
//
// [Version] is bumped on any incompatible change; a request whose V is
// newer than the daemon's is refused with CodeVersion. Version 1: the ops
// below.
//
// # Limits
//
// A request line may be at most [MaxLine] bytes. An oversized line is
// answered with CodeTooLarge and the connection is closed; malformed JSON or
// an unknown op is answered with an error and the connection stays usable.
package wire

import (
	"encoding/json"
	"errors"
	"io/fs"
	"time"

	"github.com/semfs/semfs"
)

// Version is the wire protocol version this package speaks.
const Version = 1

// MaxLine is the largest request or response line, in bytes. File data
// travels base64-encoded inside it, so clients move files in chunks of
// [MaxChunk].
const MaxLine = 16 << 20

// MaxChunk is the largest data payload of one read or write request.
const MaxChunk = 4 << 20

// Request is one call.
type Request struct {
	V    int             `json:"v,omitempty"`
	ID   uint64          `json:"id"`
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Response answers the Request with the same ID.
type Response struct {
	V      int             `json:"v"`
	ID     uint64          `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// Ops. The comment names the Args and Result types.
const (
	OpHealth   = "health"   // none → Health
	OpRegister = "register" // RegisterArgs → RegisterResult
	OpTag      = "tag"      // TagArgs → none
	OpQuery    = "query"    // QueryArgs → []semfs.QueryResult
	OpSearch   = "search"   // semfs.SearchRequest → SearchResult
	OpRelated  = "related"  // RelatedArgs → []semfs.Candidate
	OpStat     = "stat"     // PathArgs → Stat (with Meta when the tree keeps metadata)
	OpList     = "list"     // PathArgs → []Stat
	OpRead     = "read"     // ReadArgs → ReadResult
	OpWrite    = "write"    // WriteArgs → none
	OpOpen     = "open"     // OpenArgs → Stat
	OpTruncate = "truncate" // TruncateArgs → none
	OpSync     = "sync"     // PathArgs → none
	OpMkdir    = "mkdir"    // MkdirArgs → none
	OpRemove   = "remove"   // RemoveArgs → none
	OpRename   = "rename"   // RenameArgs → none
	OpSnapshot = "snapshot" // SnapshotArgs → SnapshotResult
	OpDoctor   = "doctor"   // none → Doctor
)

// Health is the readiness answer.
type Health struct {
	Version int       `json:"version"`
	Ready   bool      `json:"ready"`
	Mode    string    `json:"mode"`            // mount, headless
	Mount   string    `json:"mount,omitempty"` // mount point, when mounted
	Started time.Time `json:"started"`
	Model   string    `json:"model,omitempty"`
}

// RegisterArgs attributes the caller's later writes to App. With Token,
// one of the daemon's tokens, the caller and its descendants also act as
// that token's principal (its groups, admin flag and path policy) on the
// mount and the socket; an unknown token registers nothing. App may be
// empty when the token names the app.
type RegisterArgs struct {
	App   string `json:"app"`
	Token string `json:"token,omitempty"`
}

// RegisterResult says which process was registered (from the socket's
// peer credentials).
type RegisterResult struct {
	Pid int32  `json:"pid"`
	App string `json:"app"`
	// Principal is the principal the process now acts as: the token's id,
	// or "uid:N" without a token.
	Principal string   `json:"principal,omitempty"`
	Groups    []string `json:"groups,omitempty"`
}

// TagArgs replaces the tags of Path.
type TagArgs struct {
	Path string     `json:"path"`
	Tags semfs.Tags `json:"tags"`
}

// QueryArgs is seed 000's tag query.
type QueryArgs struct {
	Text  string `json:"text"`
	Limit int    `json:"limit,omitempty"`
}

// SearchResult is one page of a content search.
type SearchResult struct {
	Hits []semfs.SearchHit `json:"hits"`
	Next string            `json:"next,omitempty"`
}

// RelatedArgs asks for a file's likely duplicates and relatives.
type RelatedArgs struct {
	Path  string `json:"path"`
	Limit int    `json:"limit,omitempty"`
}

// PathArgs names one path.
type PathArgs struct {
	Path string `json:"path"`
}

// Stat describes a file or directory.
type Stat struct {
	Path    string      `json:"path"`
	Name    string      `json:"name"`
	IsDir   bool        `json:"isDir,omitempty"`
	Size    int64       `json:"size"`
	Mode    fs.FileMode `json:"mode"`
	ModTime time.Time   `json:"modTime"`
	Meta    *semfs.Meta `json:"meta,omitempty"`
}

// ReadArgs reads up to Length bytes at Offset (Length <= 0 or above
// MaxChunk means MaxChunk).
type ReadArgs struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset,omitempty"`
	Length int    `json:"length,omitempty"`
}

// ReadResult carries the bytes read; EOF is set when the read reached the
// end of the file.
type ReadResult struct {
	Data []byte `json:"data"`
	EOF  bool   `json:"eof,omitempty"`
	Size int64  `json:"size"`
}

// WriteArgs writes Data. With Whole set, the file is replaced (created with
// its missing parents); with Append, Data goes at the end of an existing
// file; otherwise it is written at Offset of an existing file.
type WriteArgs struct {
	Path   string      `json:"path"`
	Data   []byte      `json:"data"`
	Offset int64       `json:"offset,omitempty"`
	Whole  bool        `json:"whole,omitempty"`
	Append bool        `json:"append,omitempty"`
	Perm   fs.FileMode `json:"perm,omitempty"`
}

// OpenArgs applies open(2)'s effects (O_CREATE, O_EXCL, O_TRUNC) and
// returns the file's Stat; the client then reads and writes by offset.
type OpenArgs struct {
	Path string      `json:"path"`
	Flag int         `json:"flag"`
	Perm fs.FileMode `json:"perm,omitempty"`
}

// TruncateArgs sets the size of Path.
type TruncateArgs struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// MkdirArgs creates a directory (and its parents with All).
type MkdirArgs struct {
	Path string      `json:"path"`
	Perm fs.FileMode `json:"perm,omitempty"`
	All  bool        `json:"all,omitempty"`
}

// RemoveArgs removes a file or empty directory (a subtree with All).
type RemoveArgs struct {
	Path string `json:"path"`
	All  bool   `json:"all,omitempty"`
}

// RenameArgs moves Old to New.
type RenameArgs struct {
	Old string `json:"old"`
	New string `json:"new"`
}

// SnapshotArgs asks the daemon for a snapshot archive. With FD the
// request line carries, as SCM_RIGHTS ancillary data, the descriptor of a
// regular file the caller opened for writing, and the daemon writes the
// archive into it (the caller then renames it into place; Out is only
// reported back). Without FD the daemon writes to Out, a path on its
// host, itself: only for a caller of uid 0 or the daemon's own uid.
type SnapshotArgs struct {
	Out string `json:"out,omitempty"`
	FD  bool   `json:"fd,omitempty"`
}

// SnapshotResult describes a written archive.
type SnapshotResult struct {
	Out   string `json:"out"`
	Files int    `json:"files"`
	Bytes int64  `json:"bytes"`
}

// Doctor is the daemon's health report.
type Doctor struct {
	OK     bool    `json:"ok"`
	Checks []Check `json:"checks"`
}

// Check is one line of a Doctor report.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Error is a failed request.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Op      string `json:"op,omitempty"`
	Path    string `json:"path,omitempty"`
}

func (e *Error) Error() string {
	if e.Path != "" {
		return e.Op + " " + e.Path + ": " + e.Message
	}
	return e.Message
}

// Error codes.
const (
	CodeNotExist    = "not_exist"
	CodeExist       = "exist"
	CodePermission  = "permission"
	CodeInvalid     = "invalid"
	CodeNotDir      = "not_dir"
	CodeIsDir       = "is_dir"
	CodeNotEmpty    = "not_empty"
	CodeReadOnly    = "read_only"
	CodeQuota       = "quota"
	CodeBadRequest  = "bad_request" // malformed JSON or arguments
	CodeUnknownOp   = "unknown_op"  // the daemon does not know this op
	CodeTooLarge    = "too_large"   // the line exceeds MaxLine
	CodeVersion     = "version"     // the request is of a newer protocol version
	CodeUnsupported = "unsupported" // the daemon's tree lacks this capability
	CodeInternal    = "internal"    // anything else
)

// codes is the one table between the contract's sentinels and error codes.
var codes = []struct {
	sentinel error
	code     string
}{
	{semfs.ErrNotExist, CodeNotExist},
	{semfs.ErrExist, CodeExist},
	{semfs.ErrPermission, CodePermission},
	{semfs.ErrInvalid, CodeInvalid},
	{semfs.ErrNotDir, CodeNotDir},
	{semfs.ErrIsDir, CodeIsDir},
	{semfs.ErrNotEmpty, CodeNotEmpty},
	{semfs.ErrReadOnly, CodeReadOnly},
	{semfs.ErrQuota, CodeQuota},
}

// ErrorFrom encodes err for the wire. A *fs.PathError keeps its Op and
// Path; a semfs sentinel picks the code, anything else is CodeInternal.
func ErrorFrom(err error) *Error {
	if err == nil {
		return nil
	}
	var we *Error
	if errors.As(err, &we) {
		return we
	}
	e := &Error{Code: CodeInternal, Message: err.Error()}
	if s := semfs.Sentinel(err); s != nil {
		for _, c := range codes {
			if c.sentinel == s {
				e.Code = c.code
			}
		}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		e.Op, e.Path, e.Message = pe.Op, pe.Path, pe.Err.Error()
	}
	return e
}

// Err decodes e into the contract's error shape: a *fs.PathError wrapping
// the code's sentinel (with the message as detail), or e itself for codes
// that have no sentinel.
func (e *Error) Err() error {
	if e == nil {
		return nil
	}
	for _, c := range codes {
		if c.code == e.Code {
			return &fs.PathError{Op: e.Op, Path: e.Path, Err: &remoteError{sentinel: c.sentinel, msg: e.Message}}
		}
	}
	return e
}

// remoteError is a sentinel carried over the wire with the daemon's text.
type remoteError struct {
	sentinel error
	msg      string
}

func (r *remoteError) Error() string { return r.msg }
func (r *remoteError) Unwrap() error { return r.sentinel }
