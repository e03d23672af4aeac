// Package netproxy is a loopback TCP proxy for fault tests: it listens on
// 127.0.0.1, forwards every connection to one target, and lets a test add
// latency per direction, cut every open connection, and refuse new ones —
// the faults of a slow or broken network, without tc/netem or root.
//
// Latency is applied per chunk as it crosses the proxy (each read is
// delivered delay after it was read), so it delays data without limiting
// throughput, as a long link does.
package netproxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy forwards connections from Addr to a target.
type Proxy struct {
	ln     net.Listener
	target string

	up   atomic.Int64 // client → target delay, ns
	down atomic.Int64 // target → client delay, ns

	refuse   atomic.Bool
	accepted atomic.Int64
	bytesUp  atomic.Int64
	bytesDn  atomic.Int64

	trigger atomic.Pointer[func(up, down int64) bool]

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// New listens on a free loopback port and forwards to target (host:port).
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Addr is the proxy's listening address (127.0.0.1:port).
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Port is the proxy's listening port.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// SetLatency sets the one-way delay from client to target (up) and from
// target to client (down). It applies to data read after the call.
func (p *Proxy) SetLatency(up, down time.Duration) {
	p.up.Store(int64(up))
	p.down.Store(int64(down))
}

// Cut closes every open connection (both sides, abruptly). New connections
// are still accepted unless Refuse is set.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		abort(c)
		delete(p.conns, c)
	}
}

// CutWhen arms a one-shot fault: after each chunk forwarded, cond is called
// with the byte counts so far (see Bytes), and the first time it returns
// true every connection is cut, mid-transfer. Use it to break a link at a
// precise point of a request ("after 2 MiB of the upload"); cond may call
// Refuse to keep the link down. CutWhen(nil) disarms it.
func (p *Proxy) CutWhen(cond func(up, down int64) bool) {
	if cond == nil {
		p.trigger.Store(nil)
		return
	}
	p.trigger.Store(&cond)
}

func (p *Proxy) checkTrigger() {
	t := p.trigger.Load()
	if t == nil || *t == nil || !(*t)(p.bytesUp.Load(), p.bytesDn.Load()) {
		return
	}
	if p.trigger.CompareAndSwap(t, nil) {
		p.Cut()
	}
}

// Refuse makes the proxy reset new connections (on) or accept them again
// (off). Open connections are not affected; Cut them too for a full outage.
func (p *Proxy) Refuse(on bool) { p.refuse.Store(on) }

// Accepted is the number of connections forwarded so far.
func (p *Proxy) Accepted() int64 { return p.accepted.Load() }

// Bytes returns how many bytes crossed the proxy so far, client → target
// (up) and target → client (down).
func (p *Proxy) Bytes() (up, down int64) { return p.bytesUp.Load(), p.bytesDn.Load() }

// Open is the number of connections (client and target sides) open now.
func (p *Proxy) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Close stops listening, cuts every connection and waits for the proxy's
// goroutines to end.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.Cut()
	p.wg.Wait()
	return err
}

// abort closes c with a reset rather than an orderly shutdown, as a broken
// link looks to both ends.
func abort(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// track registers c; it reports false (and closes c) if the proxy is closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		abort(c)
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if p.refuse.Load() {
			abort(c)
			continue
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	if !p.track(client) {
		return
	}
	defer p.untrack(client)
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		abort(client)
		return
	}
	if !p.track(server) {
		return
	}
	defer p.untrack(server)
	p.accepted.Add(1)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(server, client, &p.up, &p.bytesUp) }()
	go func() { defer wg.Done(); p.pipe(client, server, &p.down, &p.bytesDn) }()
	wg.Wait()
}

// chunk is data read at one moment, due for delivery at due.
type chunk struct {
	data []byte
	due  time.Time
}

// pipe copies src to dst, delivering each chunk delay after it was read.
// When either side fails both are closed, so the peer pipe ends too.
func (p *Proxy) pipe(dst, src net.Conn, delay, count *atomic.Int64) {
	q := make(chan chunk, 256)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range q {
			if d := time.Until(c.due); d > 0 {
				time.Sleep(d)
			}
			n, err := dst.Write(c.data)
			count.Add(int64(n))
			p.checkTrigger()
			if err != nil {
				abort(src)
				for range q {
				}
				return
			}
		}
		// src ended cleanly: pass the half-close on.
		if tc, ok := dst.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
	}()
	for {
		buf := make([]byte, 32<<10)
		n, err := src.Read(buf)
		if n > 0 {
			q <- chunk{data: buf[:n], due: time.Now().Add(time.Duration(delay.Load()))}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				abort(dst)
			}
			break
		}
	}
	close(q)
	<-done
}
