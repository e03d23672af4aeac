package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/wire"
)

// handler runs one op for a peer.
type handler func(ctx context.Context, p *peer, args json.RawMessage) (any, error)

// peer is one connection's identity: the credentials of SO_PEERCRED and
// the process that connected, pinned at accept by pid and start time (with
// SO_PEERPIDFD, so the start time read is that process's). Once that
// process is gone, its pid may belong to anyone: the connection then acts
// as its uid with no groups and may not register.
type peer struct {
	pid      int32
	uid, gid uint32
	proc     procID
	gone     bool // the connecting process had exited by accept
	// fds holds descriptors received as SCM_RIGHTS and not taken yet.
	fds []int
}

// maxFDs bounds the descriptors a connection may have waiting.
const maxFDs = 4

// takeFD returns the oldest descriptor received on the connection, or -1.
func (p *peer) takeFD() int {
	if len(p.fds) == 0 {
		return -1
	}
	fd := p.fds[0]
	p.fds = p.fds[1:]
	return fd
}

// closeFDs closes the descriptors received and not taken.
func (p *peer) closeFDs() {
	for _, fd := range p.fds {
		unix.Close(fd)
	}
	p.fds = nil
}

// msgReader reads a connection keeping the descriptors sent with its
// bytes (SCM_RIGHTS) in p.fds. A descriptor arrives with the first byte of
// the write that carried it, so it is queued by the time the request line
// holding that byte is read.
type msgReader struct {
	c   *net.UnixConn
	p   *peer
	oob []byte
}

func (r *msgReader) Read(b []byte) (int, error) {
	n, oobn, _, _, err := r.c.ReadMsgUnix(b, r.oob)
	if n < 0 {
		n = 0
	}
	if oobn > 0 {
		msgs, perr := unix.ParseSocketControlMessage(r.oob[:oobn])
		if perr == nil {
			for _, m := range msgs {
				fds, err := unix.ParseUnixRights(&m)
				if err != nil {
					continue
				}
				for _, fd := range fds {
					if len(r.p.fds) >= maxFDs {
						unix.Close(fd)
						continue
					}
					unix.CloseOnExec(fd)
					r.p.fds = append(r.p.fds, fd)
				}
			}
		}
	}
	return n, err
}

// socketServer serves the control socket: JSON lines, one response per
// request, in order.
type socketServer struct {
	ln       net.Listener
	path     string
	handlers map[string]handler
	apps     *Apps
	log      *slog.Logger

	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// listenSocket creates the socket at path: its directory is created 0755, a
// stale socket file is replaced, and the socket is made 0660 and owned by
// group (when set), so only the owner and that group may connect.
func listenSocket(path, group string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		return nil, fmt.Errorf("control socket %s: another daemon is serving it", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("control socket: removing stale %s: %w", path, err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	if err := os.Chmod(path, 0o660); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket: %w", err)
	}
	if group != "" {
		gid, err := lookupGroup(group)
		if err == nil {
			err = os.Chown(path, -1, gid)
		}
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("control socket: group %q: %w", group, err)
		}
	}
	return ln, nil
}

func lookupGroup(group string) (int, error) {
	if gid, err := strconv.Atoi(group); err == nil {
		return gid, nil
	}
	g, err := user.LookupGroup(group)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(g.Gid)
}

func (s *socketServer) serve(ctx context.Context) {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(ctx, c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			c.Close()
		}()
	}
}

// close stops accepting, closes every connection and removes the socket.
func (s *socketServer) close() {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	os.Remove(s.path)
}

// peerOf returns the identity of c's peer. Without SO_PEERPIDFD (kernels
// before 6.5) the start time is read at accept, and a pid reused between
// connect and accept would go unnoticed.
func (s *socketServer) peerOf(c net.Conn) (*peer, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil, errors.New("not a unix connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *unix.Ucred
	var serr error
	pidfd := -1
	if err := raw.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if serr == nil {
			if pfd, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PEERPIDFD); err == nil {
				pidfd = pfd
			} else if errors.Is(err, unix.ESRCH) {
				pidfd = -2 // the peer has exited (and was reaped) already
			}
		}
	}); err != nil {
		return nil, err
	}
	if serr != nil {
		return nil, serr
	}
	p := &peer{pid: cred.Pid, uid: cred.Uid, gid: cred.Gid}
	switch {
	case pidfd == -2 || cred.Pid <= 0:
		p.gone = true
	default:
		p.proc, ok = s.apps.identify(cred.Pid, pidfd)
		p.gone = !ok
	}
	if pidfd >= 0 {
		unix.Close(pidfd)
	}
	return p, nil
}

// principal is the principal of a request on p's connection: that of the
// process that connected while it runs, and its uid with no groups after.
func (s *socketServer) principal(p *peer) semfs.Principal {
	if p.gone {
		return semfs.Principal{ID: uidID(p.uid)}
	}
	reg, alive := s.apps.resolveProc(p.proc)
	if !alive {
		return semfs.Principal{ID: uidID(p.uid)}
	}
	return principalOf(reg, p.uid)
}

// readLine reads one line of at most max bytes (without the newline). A
// longer line yields errTooLarge.
var errTooLarge = errors.New("line too large")

func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(buf)+len(chunk) > max+1 {
			return nil, errTooLarge
		}
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			return bytes.TrimSuffix(buf, []byte("\n")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(buf) > 0:
			return buf, nil
		default:
			return nil, err
		}
	}
}

func (s *socketServer) serveConn(ctx context.Context, c net.Conn) {
	p, err := s.peerOf(c)
	if err != nil {
		s.log.Warn("control socket: no peer credentials; closing", "err", err)
		return
	}
	defer p.closeFDs()
	r := bufio.NewReaderSize(&msgReader{c: c.(*net.UnixConn), p: p, oob: make([]byte, unix.CmsgSpace(maxFDs*4))}, 64<<10)
	w := bufio.NewWriterSize(c, 64<<10)
	enc := json.NewEncoder(w)
	reply := func(resp wire.Response) bool {
		resp.V = wire.Version
		if err := enc.Encode(resp); err != nil {
			return false
		}
		return w.Flush() == nil
	}
	for {
		line, err := readLine(r, wire.MaxLine)
		if errors.Is(err, errTooLarge) {
			reply(wire.Response{Error: &wire.Error{Code: wire.CodeTooLarge, Message: fmt.Sprintf("request line exceeds %d bytes; send file data in chunks of at most %d bytes", wire.MaxLine, wire.MaxChunk)}})
			return
		}
		if err != nil {
			return
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var req wire.Request
		if err := json.Unmarshal(line, &req); err != nil {
			if !reply(wire.Response{Error: &wire.Error{Code: wire.CodeBadRequest, Message: "malformed JSON request: " + err.Error()}}) {
				return
			}
			continue
		}
		if !reply(s.dispatch(ctx, p, req)) {
			return
		}
		if r.Buffered() == 0 {
			p.closeFDs() // sent with this request and not taken by it
		}
	}
}

func (s *socketServer) dispatch(ctx context.Context, p *peer, req wire.Request) wire.Response {
	resp := wire.Response{ID: req.ID}
	if req.V > wire.Version {
		resp.Error = &wire.Error{Code: wire.CodeVersion, Message: fmt.Sprintf("request is protocol version %d; this daemon speaks %d", req.V, wire.Version)}
		return resp
	}
	h, ok := s.handlers[req.Op]
	if !ok {
		resp.Error = &wire.Error{Code: wire.CodeUnknownOp, Message: fmt.Sprintf("unknown op %q", req.Op)}
		return resp
	}
	ctx = semfs.WithPrincipal(ctx, s.principal(p))
	out, err := h(ctx, p, req.Args)
	if err != nil {
		resp.Error = wire.ErrorFrom(err)
		if resp.Error.Code == wire.CodeInternal {
			s.log.Warn("control socket: op failed", "op", req.Op, "err", err)
		}
		return resp
	}
	if out != nil {
		b, err := json.Marshal(out)
		if err != nil {
			resp.Error = wire.ErrorFrom(err)
			return resp
		}
		resp.Result = b
	}
	return resp
}

// badArgs is the error for arguments that do not decode.
func badArgs(op string, err error) error {
	return &wire.Error{Code: wire.CodeBadRequest, Message: fmt.Sprintf("%s: malformed arguments: %v", op, err)}
}

// decode unmarshals args into v (an absent args is the zero value).
func decode(op string, args json.RawMessage, v any) error {
	if len(args) == 0 || string(args) == "null" {
		return nil
	}
	if err := json.Unmarshal(args, v); err != nil {
		return badArgs(op, err)
	}
	return nil
}
