package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/semfs/semfs"
)

// Limits bound one Run. A zero field means the default from
// [DefaultLimits]; a negative one means no limit.
type Limits struct {
	MaxOutput         int64         // bytes written to stdout and stderr together
	Timeout           time.Duration // wall-clock run time
	MaxLoopIterations int64         // iterations of all for/while/until loops together
}

// DefaultLimits are the limits used for zero fields of [Limits].
var DefaultLimits = Limits{
	MaxOutput:         64 << 20,
	Timeout:           60 * time.Second,
	MaxLoopIterations: 1_000_000,
}

// Exit statuses of a run the shell stopped itself.
const (
	ExitRejected = 2   // syntax error or refused construct
	ExitLimit    = 124 // a Limit was reached
	ExitNotFound = 127 // unknown command
)

// Errors returned by [Session.Run] when it stopped a script.
var (
	ErrOutputLimit = errors.New("output limit exceeded")
	ErrTimeout     = errors.New("run time limit exceeded")
	ErrLoopLimit   = errors.New("loop iteration limit exceeded")
)

// SearchFunc runs a content search; see [semfs.SearchFS].
type SearchFunc func(ctx context.Context, req semfs.SearchRequest, fn func(semfs.SearchHit) error) (next string, err error)

// QueryFunc runs a tag query; see [semfs.QueryFS].
type QueryFunc func(ctx context.Context, text string, limit int) ([]semfs.QueryResult, error)

// Options configure a [Session].
type Options struct {
	// Principal is who runs the scripts; it is put in the context of every
	// FS call.
	Principal semfs.Principal
	Limits    Limits
	// Dir is the initial working directory ("/" if empty).
	Dir string
	// Env holds extra environment variables as KEY=VALUE.
	Env []string
	// View, if set, answers listings, stats and globs from memory. It must
	// have been made from a Tree of the same fsys, for Principal.
	View *View
	// ReadOnly refuses every write even when the tree accepts writes.
	ReadOnly bool
	// Search and Query override the tree's SearchFS and QueryFS.
	Search SearchFunc
	Query  QueryFunc
	// Owner and Group are shown by ls -l and stat ("root" if empty).
	Owner, Group string
}

// Session is one shell session over a tree. Runs of one session are
// serialised; use one session per agent conversation.
type Session struct {
	fsys  semfs.FS
	opts  Options
	nav   nav
	cache *readCache

	mu     sync.Mutex
	runner *interp.Runner
	exited bool

	loops  atomic.Int64 // loop iterations of the current run
	cancel context.CancelCauseFunc
}

// nav answers the questions about the shape of the tree: stat and list.
type nav interface {
	stat(ctx context.Context, p string) (fs.FileInfo, error)
	readDir(ctx context.Context, p string) ([]fs.FileInfo, error)
	// added records a path the session wrote.
	added(ctx context.Context, p string)
	// hidden reports whether p or one of its ancestors exists but is
	// hidden from the session: writes there are refused.
	hidden(p string) bool
}

// New opens a session over fsys.
func New(fsys semfs.FS, opts Options) *Session {
	if opts.Dir == "" {
		opts.Dir = "/"
	}
	if opts.Owner == "" {
		opts.Owner = "root"
	}
	if opts.Group == "" {
		opts.Group = "root"
	}
	s := &Session{fsys: fsys, opts: opts}
	if opts.View != nil {
		s.nav = newViewNav(opts.View, fsys)
		s.cache = opts.View.t.cache
	} else {
		s.nav = fsNav{fsys}
		s.cache = newReadCache(32 << 20)
	}
	return s
}

// Dir returns the session's working directory.
func (s *Session) Dir() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runner != nil {
		return s.runner.Dir
	}
	return s.opts.Dir
}

// Exited reports whether a script ran the exit builtin; an interactive
// front end ends the session then.
func (s *Session) Exited() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exited
}

func (s *Session) limits() Limits {
	l := s.opts.Limits
	if l.MaxOutput == 0 {
		l.MaxOutput = DefaultLimits.MaxOutput
	}
	if l.Timeout == 0 {
		l.Timeout = DefaultLimits.Timeout
	}
	if l.MaxLoopIterations == 0 {
		l.MaxLoopIterations = DefaultLimits.MaxLoopIterations
	}
	return l
}

// loopMarker is the command the shell inserts at the top of every loop body
// to count iterations. It cannot be typed by a user: it is not a valid word
// without quoting, and it is checked before any builtin.
const loopMarker = "\x00semfs-loop"

// cdFail replaces a cd whose target is missing, to explain the failure.
const cdFail = "\x00semfs-cd-fail"

// Run parses and runs script. It returns the exit status of the script; err
// is non-nil only when the shell stopped the script itself (a limit, see
// ErrOutputLimit, ErrTimeout, ErrLoopLimit) or could not run it at all.
// Messages for people are written to stderr in every case.
func (s *Session) Run(ctx context.Context, script string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		fmt.Fprintf(stderr, "semfs: syntax error: %v\n", err)
		return ExitRejected, nil
	}
	if msg := check(file); msg != "" {
		fmt.Fprintf(stderr, "semfs: %s\n", msg)
		return ExitRejected, nil
	}
	instrumentLoops(file)

	lim := s.limits()
	ctx = semfs.WithPrincipal(ctx, s.opts.Principal)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if lim.Timeout > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, lim.Timeout, ErrTimeout)
		defer stop()
	}
	s.cancel = cancel
	budget := &outBudget{max: lim.MaxOutput, cancel: cancel}
	out := &limitWriter{w: stdout, b: budget}
	errw := &limitWriter{w: stderr, b: budget}
	s.loops.Store(0)

	if s.runner == nil {
		if err := s.newRunner(); err != nil {
			return 1, err
		}
	}
	// interp needs an *os.File for stdin; give it a pipe fed from stdin
	// and close both ends when the run ends, so no descriptor or copying
	// goroutine outlives it.
	var in *os.File
	if f, ok := stdin.(*os.File); ok {
		in = f
	} else if stdin != nil {
		pr, pw, err := os.Pipe()
		if err != nil {
			return 1, err
		}
		go func() {
			io.Copy(pw, stdin)
			pw.Close()
		}()
		defer pr.Close()
		in = pr
	}
	if err := interp.StdIO(in, out, errw)(s.runner); err != nil {
		return 1, err
	}
	runErr := s.runner.Run(ctx, file)
	if _, isStatus := interp.IsExitStatus(runErr); s.runner.Exited() && (runErr == nil || isStatus) && ctx.Err() == nil {
		s.exited = true // the exit builtin, not a stopped run
	}
	// Stop reporting to the caller's writers: a pipeline stage may still
	// hold them for a moment after Run returns.
	interp.StdIO(nil, io.Discard, io.Discard)(s.runner)

	if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
		var msg string
		switch {
		case errors.Is(cause, ErrOutputLimit):
			msg = fmt.Sprintf("output limit of %d bytes exceeded; the script was stopped (narrow the command, e.g. pipe it into head)", lim.MaxOutput)
		case errors.Is(cause, ErrTimeout):
			msg = fmt.Sprintf("run time limit of %v exceeded; the script was stopped", lim.Timeout)
		case errors.Is(cause, ErrLoopLimit):
			msg = fmt.Sprintf("loop iteration limit of %d exceeded; the script was stopped (is a loop condition never false?)", lim.MaxLoopIterations)
		default:
			return 130, cause
		}
		fmt.Fprintf(stderr, "semfs: %s\n", msg)
		return ExitLimit, cause
	}
	if runErr == nil {
		return 0, nil
	}
	if code, ok := interp.IsExitStatus(runErr); ok {
		return int(code), nil
	}
	fmt.Fprintf(errw, "semfs: %v\n", runErr)
	return 1, runErr
}

func (s *Session) newRunner() error {
	env := []string{
		"HOME=/", "PATH=", "TMPDIR=/dev/null/semfs", "USER=" + s.opts.Owner,
		"SHELL=semfs", "TERM=dumb", "LC_ALL=C.UTF-8", "UID=0", "EUID=0",
	}
	env = append(env, s.opts.Env...)
	r, err := interp.New(
		interp.Env(expand.ListEnviron(env...)),
		interp.ExecHandlers(s.execMiddleware),
		interp.CallHandler(s.callHandler),
		interp.OpenHandler(s.openHandler),
		interp.StatHandler(s.statHandler),
		interp.ReadDirHandler2(s.readDirHandler),
		interp.AccessHandler(s.accessHandler),
		interp.BashOpts("-s", "globstar"),
	)
	if err != nil {
		return err
	}
	dir, err := semfs.Clean("cd", s.opts.Dir)
	if err != nil {
		return err
	}
	r.Dir = dir // never the Dir option: it stats the host
	s.runner = r
	return nil
}

// check walks the syntax tree and reports the first construct the shell
// refuses, as a message for the user.
func check(file *syntax.File) string {
	var msg string
	syntax.Walk(file, func(n syntax.Node) bool {
		if msg != "" {
			return false
		}
		switch n := n.(type) {
		case *syntax.ProcSubst:
			msg = fmt.Sprintf("line %d: process substitution (<(...) or >(...)) is not supported; write the command's output to a file or use a pipe", n.Pos().Line())
		case *syntax.Stmt:
			if n.Background {
				msg = fmt.Sprintf("line %d: background jobs (&) are not supported; run the command in the foreground", n.Pos().Line())
			}
			if n.Coprocess {
				msg = fmt.Sprintf("line %d: coprocesses are not supported", n.Pos().Line())
			}
		case *syntax.CoprocClause:
			msg = fmt.Sprintf("line %d: coprocesses are not supported", n.Pos().Line())
		}
		return msg == ""
	})
	return msg
}

// instrumentLoops inserts the loop marker command at the top of the body of
// every for, while and until loop, so that each iteration is counted.
func instrumentLoops(file *syntax.File) {
	marker := func() *syntax.Stmt {
		return &syntax.Stmt{Cmd: &syntax.CallExpr{Args: []*syntax.Word{{Parts: []syntax.WordPart{&syntax.Lit{Value: loopMarker}}}}}}
	}
	syntax.Walk(file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.WhileClause:
			n.Do = append([]*syntax.Stmt{marker()}, n.Do...)
		case *syntax.ForClause:
			n.Do = append([]*syntax.Stmt{marker()}, n.Do...)
		}
		return true
	})
}

// callHandler keeps host lookups out: builtins that would search the host's
// PATH are answered by the shell.
func (s *Session) callHandler(ctx context.Context, args []string) ([]string, error) {
	switch args[0] {
	case "cd":
		// Answer a failing cd here, with a hint, instead of interp's
		// terse message.
		if len(args) == 2 && args[1] != "-" && args[1] != "" {
			hc := interp.HandlerCtx(ctx)
			info, err := s.nav.stat(ctx, vpath(hc.Dir, args[1]))
			if err == nil && !info.IsDir() {
				err = semfs.ErrNotDir
			}
			if err != nil {
				return []string{cdFail, args[1]}, nil
			}
		}
		return args, nil
	case "eval":
		// eval'd text is parsed late: refuse there what Run refuses.
		file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(strings.Join(args[1:], " ")), "")
		if err == nil {
			if msg := check(file); msg != "" {
				return []string{"\x00semfs-refuse", "eval", msg}, nil
			}
		}
		return args, nil
	case "help":
		if len(args) == 1 {
			return []string{"\x00semfs-refuse", "help"}, nil
		}
		return args, nil
	case "type", "hash", "command", "exec", "source", ".", "enable", "builtin":
		switch {
		case args[0] == "command" && len(args) > 1 && args[1] != "-v" && args[1] != "-V":
			return args[1:], nil // command NAME ARGS runs NAME
		case args[0] == "builtin" && len(args) > 1:
			return args[1:], nil
		}
		return append([]string{"\x00semfs-refuse"}, args...), nil
	}
	return args, nil
}

// execMiddleware runs every command that is not a shell builtin or
// function. It never calls next: no host process is ever started.
func (s *Session) execMiddleware(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	return func(ctx context.Context, args []string) error {
		hc := interp.HandlerCtx(ctx)
		switch args[0] {
		case loopMarker:
			lim := s.limits().MaxLoopIterations
			if n := s.loops.Add(1); lim > 0 && n > lim {
				s.cancel(ErrLoopLimit)
				return ErrLoopLimit
			}
			return nil
		case "\x00semfs-refuse":
			return s.refuse(hc, args[1:])
		case cdFail:
			c := s.newCall(ctx, hc, []string{"cd", args[1]})
			_, info, err := c.stat(args[1])
			if err == nil && !info.IsDir() {
				err = semfs.ErrNotDir
			}
			c.pathErr("%s: ", args[1], err)
			return interp.NewExitStatus(1)
		}
		b, ok := builtins[args[0]]
		if !ok {
			fmt.Fprintf(hc.Stderr, "semfs: %s: command not found%s\n", args[0], suggestCommand(args[0]))
			return interp.NewExitStatus(ExitNotFound)
		}
		c := s.newCall(ctx, hc, args)
		code := b(c)
		c.flush()
		if c.helped {
			code = 0
		}
		if code != 0 {
			return interp.NewExitStatus(uint8(code))
		}
		return nil
	}
}

func (s *Session) refuse(hc interp.HandlerContext, args []string) error {
	switch args[0] {
	case "type", "command":
		// command -v NAME / type NAME: say what a name is without PATH.
		code := 0
		for _, a := range args[1:] {
			if strings.HasPrefix(a, "-") {
				continue
			}
			switch {
			case builtins[a] != nil || interp.IsBuiltin(a):
				if args[0] == "type" {
					fmt.Fprintf(hc.Stdout, "%s is a shell builtin\n", a)
				} else {
					fmt.Fprintf(hc.Stdout, "%s\n", a)
				}
			default:
				if args[0] == "type" {
					fmt.Fprintf(hc.Stderr, "semfs: type: %s: not found\n", a)
				}
				code = 1
			}
		}
		if code != 0 {
			return interp.NewExitStatus(uint8(code))
		}
		return nil
	}
	if args[0] == "help" {
		fmt.Fprintf(hc.Stdout, "semfs sh runs bash syntax (pipes, redirections, globs, cd, variables, loops, $(...), heredocs)\n"+
			"with these commands, all Go builtins over the tree; no host program is ever started:\n  %s\n"+
			"Run 'COMMAND --help' for the options a command supports.\n", strings.Join(builtinNames(), " "))
		return nil
	}
	if args[0] == "eval" && len(args) == 2 {
		fmt.Fprintf(hc.Stderr, "semfs: eval: %s\n", args[1])
		return interp.NewExitStatus(ExitRejected)
	}
	fmt.Fprintf(hc.Stderr, "semfs: %s: not supported in the virtual shell\n", args[0])
	return interp.NewExitStatus(2)
}

// suggestCommand proposes a builtin close to an unknown command name.
func suggestCommand(name string) string {
	best, bestD := "", 3
	for n := range builtins {
		if d := editDistance(name, n); d < bestD || (d == bestD && n < best) {
			best, bestD = n, d
		}
	}
	list := builtinNames()
	if best != "" && bestD <= 2 {
		return fmt.Sprintf(" (did you mean %s? available commands: %s)", best, strings.Join(list, " "))
	}
	return fmt.Sprintf(" (no host programs run here; available commands: %s)", strings.Join(list, " "))
}

func builtinNames() []string {
	names := []string{"cd", "pwd", "echo", "printf", "test", "[", "true", "false"}
	for n := range builtins {
		if !strings.HasPrefix(n, "\x00") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return slices.Compact(names)
}

// vpath resolves a shell path (absolute or relative to dir) to a canonical
// tree path. ".." at the root stays at the root.
func vpath(dir, name string) string {
	if !path.IsAbs(name) {
		name = path.Join(dir, name)
	}
	return path.Clean(name)
}

// openHandler serves redirections. Reads go through the session's view
// and the FS; writes through semfs.OpenFile / WriteFile. Every failure is a
// bare *fs.PathError, as interp requires, so it is printed and sets status 1.
func (s *Session) openHandler(ctx context.Context, name string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
	hc := interp.HandlerCtx(ctx)
	p := vpath(hc.Dir, name)
	if name == "/dev/null" {
		return devNull{}, nil
	}
	if name == "/dev/stdout" || name == "/dev/stderr" {
		w := hc.Stdout
		if name == "/dev/stderr" {
			w = hc.Stderr
		}
		return writeOnly{w}, nil
	}
	if _, err := semfs.Clean("open", p); err != nil {
		return nil, shErr(name, errors.Unwrap(err))
	}
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		data, err := s.readFile(ctx, p)
		if err != nil {
			return nil, shErr(name, bareErr(err))
		}
		return &readOnly{Reader: strings.NewReader(string(data))}, nil
	}
	if s.opts.ReadOnly {
		return nil, shErr(name, semfs.ErrReadOnly)
	}
	info, err := s.nav.stat(ctx, p)
	switch {
	case err == nil && info.IsDir():
		return nil, shErr(name, semfs.ErrIsDir)
	case err == nil && flag&os.O_EXCL != 0:
		return nil, shErr(name, semfs.ErrExist)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, shErr(name, bareErr(err))
	case err != nil:
		parent, perr := s.nav.stat(ctx, path.Dir(p))
		if perr != nil {
			return nil, shErr(name, bareErr(perr))
		}
		if !parent.IsDir() {
			return nil, shErr(name, semfs.ErrNotDir)
		}
	}
	w := &fileWriter{s: s, ctx: ctx, p: p, name: name}
	if flag&os.O_APPEND != 0 && err == nil {
		old, rerr := s.readFile(ctx, p)
		if rerr != nil {
			return nil, shErr(name, bareErr(rerr))
		}
		w.buf = append(w.buf, old...)
	}
	// Create (or truncate) now, as open(2) would, so that an empty
	// redirection (": > f") leaves an empty file and errors show early.
	if werr := s.writeFile(ctx, p, w.buf); werr != nil {
		return nil, shErr(name, bareErr(werr))
	}
	return w, nil
}

// bareErr returns the sentinel inside a semfs error, so that interp prints
// "open NAME: no such file or directory" with the user's own NAME.
func bareErr(err error) error {
	if s := semfs.Sentinel(err); s != nil {
		return s
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (s *Session) writeFile(ctx context.Context, p string, data []byte) error {
	if s.opts.ReadOnly {
		return semfs.PathErr("write", p, semfs.ErrReadOnly, "this session is read-only")
	}
	if s.nav.hidden(p) {
		return semfs.PathErr("write", p, semfs.ErrPermission, "")
	}
	if err := semfs.WriteFile(ctx, s.fsys, p, data, 0o644); err != nil {
		return err
	}
	s.cache.remove(p)
	s.nav.added(ctx, p)
	return nil
}

// fileWriter collects a redirection's output and writes the whole file on
// Close (and on every large chunk, so readers in the same script see it).
type fileWriter struct {
	s      *Session
	ctx    context.Context
	p      string
	name   string
	buf    []byte
	closed bool
}

func (w *fileWriter) Read([]byte) (int, error) {
	return 0, shErr(w.name, errors.New("Bad file descriptor"))
}

func (w *fileWriter) Write(b []byte) (int, error) {
	w.buf = append(w.buf, b...)
	return len(b), nil
}

func (w *fileWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if err := w.s.writeFile(w.ctx, w.p, w.buf); err != nil {
		return shErr(w.name, bareErr(err))
	}
	return nil
}

type readOnly struct{ *strings.Reader }

func (readOnly) Write([]byte) (int, error) { return 0, errors.New("bad file descriptor") }
func (readOnly) Close() error              { return nil }

type writeOnly struct{ w io.Writer }

func (w writeOnly) Read([]byte) (int, error)    { return 0, io.EOF }
func (w writeOnly) Write(b []byte) (int, error) { return w.w.Write(b) }
func (w writeOnly) Close() error                { return nil }

type devNull struct{}

func (devNull) Read([]byte) (int, error)    { return 0, io.EOF }
func (devNull) Write(b []byte) (int, error) { return len(b), nil }
func (devNull) Close() error                { return nil }

func (s *Session) statHandler(ctx context.Context, name string, _ bool) (fs.FileInfo, error) {
	hc := interp.HandlerCtx(ctx)
	p := vpath(hc.Dir, name)
	info, err := s.nav.stat(ctx, p)
	if err != nil {
		return nil, shErr(name, bareErr(err))
	}
	return info, nil
}

func (s *Session) readDirHandler(ctx context.Context, name string) ([]fs.DirEntry, error) {
	hc := interp.HandlerCtx(ctx)
	p := vpath(hc.Dir, name)
	infos, err := s.nav.readDir(ctx, p)
	if err != nil {
		return nil, shErr(name, bareErr(err))
	}
	out := make([]fs.DirEntry, len(infos))
	for i, fi := range infos {
		out[i] = fs.FileInfoToDirEntry(fi)
	}
	return out, nil
}

// accessHandler answers test -r/-w/-x and cd's check from the tree: what
// the session can see it can read; directories are searchable; writes
// depend on the tree accepting them.
func (s *Session) accessHandler(ctx context.Context, name string, mode interp.AccessMode) error {
	hc := interp.HandlerCtx(ctx)
	p := vpath(hc.Dir, name)
	info, err := s.nav.stat(ctx, p)
	if err != nil {
		return shErr(name, bareErr(err))
	}
	if mode&interp.AccessWrite != 0 && !s.writable() {
		return shErr(name, semfs.ErrReadOnly)
	}
	if mode&interp.AccessExec != 0 && !info.IsDir() {
		return shErr(name, fs.ErrPermission)
	}
	return nil
}

func (s *Session) writable() bool {
	if s.opts.ReadOnly {
		return false
	}
	_, w1 := s.fsys.(semfs.WriteFileFS)
	_, w2 := s.fsys.(semfs.OpenFileFS)
	return w1 || w2
}

// outBudget is the output allowance shared by stdout and stderr.
type outBudget struct {
	mu       sync.Mutex
	used     int64
	max      int64
	exceeded bool
	cancel   context.CancelCauseFunc
}

type limitWriter struct {
	w io.Writer
	b *outBudget
}

func (l *limitWriter) Write(p []byte) (int, error) {
	b := l.b
	b.mu.Lock()
	if b.exceeded {
		b.mu.Unlock()
		return 0, ErrOutputLimit
	}
	n := len(p)
	if b.max > 0 && b.used+int64(n) > b.max {
		n = int(b.max - b.used)
		b.exceeded = true
	}
	b.used += int64(n)
	exceeded := b.exceeded
	b.mu.Unlock()
	w, err := l.w.Write(p[:n])
	if err == nil && exceeded {
		b.cancel(ErrOutputLimit)
		return w, ErrOutputLimit
	}
	return w, err
}

// shErr is the error the handlers give the interpreter: a bare
// *fs.PathError (as interp requires) whose text reads like bash's,
// "semfs: NAME: No such file or directory", while errors.Is still finds
// the sentinel.
func shErr(name string, err error) *fs.PathError {
	return &fs.PathError{Op: "semfs:", Path: name, Err: &textErr{err: err, text: errText(err)}}
}

type textErr struct {
	err  error
	text string
}

func (e *textErr) Error() string { return e.text }
func (e *textErr) Unwrap() error { return e.err }
