package netproxy

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"
)

// echoServer echoes every connection until it closes.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

func newProxy(t *testing.T, target string) *Proxy {
	t.Helper()
	p, err := New(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func roundTrip(t *testing.T, c net.Conn, msg []byte) time.Duration {
	t.Helper()
	start := time.Now()
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, msg) {
		t.Fatal("echo through the proxy changed the bytes")
	}
	return time.Since(start)
}

func TestForwardsBytesIntact(t *testing.T) {
	p := newProxy(t, echoServer(t))
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	data := make([]byte, 4<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	errc := make(chan error, 1)
	go func() { _, err := c.Write(data); errc <- err }()
	got := make([]byte, len(data))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("4 MiB echoed through the proxy differ")
	}
	if up, down := p.Bytes(); up != int64(len(data)) || down != int64(len(data)) {
		t.Fatalf("Bytes = %d up, %d down; want %d each", up, down, len(data))
	}
	if p.Accepted() != 1 {
		t.Fatalf("Accepted = %d, want 1", p.Accepted())
	}
}

func TestLatencyPerDirection(t *testing.T) {
	p := newProxy(t, echoServer(t))
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fast := roundTrip(t, c, []byte("ping"))
	p.SetLatency(30*time.Millisecond, 20*time.Millisecond)
	slow := roundTrip(t, c, []byte("ping"))
	if slow < 50*time.Millisecond {
		t.Fatalf("round trip with 30+20 ms latency took %v", slow)
	}
	if slow > 2*time.Second {
		t.Fatalf("round trip with 50 ms latency took %v", slow)
	}
	// Latency delays, it does not serialise: many chunks in flight arrive
	// about one delay later, not one delay each.
	start := time.Now()
	msg := bytes.Repeat([]byte("x"), 64)
	for range 20 {
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := io.ReadFull(c, make([]byte, 20*64)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Fatalf("20 pipelined writes took %v with 50 ms of latency: the delay is serialising", d)
	}
	p.SetLatency(0, 0)
	if d := roundTrip(t, c, []byte("ping")); d > 40*time.Millisecond && fast < 5*time.Millisecond {
		t.Fatalf("round trip after removing latency took %v (before: %v)", d, fast)
	}
}

func TestCutAndRefuse(t *testing.T) {
	p := newProxy(t, echoServer(t))
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	roundTrip(t, c, []byte("hello"))
	if p.Open() != 2 {
		t.Fatalf("Open = %d with one connection, want 2 (both sides)", p.Open())
	}
	p.Refuse(true)
	p.Cut()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("read on a cut connection succeeded")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("a cut connection hung instead of failing")
	}
	// While refusing, a new connection is reset at once.
	c2, err := net.Dial("tcp", p.Addr())
	if err == nil {
		c2.SetReadDeadline(time.Now().Add(5 * time.Second))
		c2.Write([]byte("x"))
		_, err = c2.Read(make([]byte, 1))
		c2.Close()
		if err == nil {
			t.Fatal("a refused connection carried data")
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatal("a refused connection hung instead of failing")
		}
	}
	p.Refuse(false)
	c3, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	roundTrip(t, c3, []byte("back"))
	if p.Accepted() != 2 {
		t.Fatalf("Accepted = %d, want 2 (the refused one is not forwarded)", p.Accepted())
	}
}

func TestTargetDown(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	p := newProxy(t, addr)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		return // reset during the handshake: as good as a reset after it
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("read through a proxy whose target is down succeeded")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("a proxy whose target is down hung instead of resetting")
	}
}

func TestCutWhen(t *testing.T) {
	p := newProxy(t, echoServer(t))
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p.CutWhen(func(up, down int64) bool { return up >= 1<<20 })
	go func() {
		buf := make([]byte, 64<<10)
		for range 64 { // 4 MiB, more than the trigger lets through
			if _, err := c.Write(buf); err != nil {
				return
			}
		}
	}()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := io.Copy(io.Discard, c)
	if err == nil && n >= 4<<20 {
		t.Fatal("the transfer outlived a cut armed at 1 MiB")
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the armed cut never fired")
	}
	if n > 2<<20 {
		t.Fatalf("%d bytes came back after a cut at 1 MiB", n)
	}
	// One-shot: a new connection works.
	c2, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	roundTrip(t, c2, []byte("after"))
}

// CutWhen(nil) disarms an armed cut: data keeps flowing (the proxy once
// called the nil condition and crashed the test binary).
func TestCutWhenNilDisarms(t *testing.T) {
	p := newProxy(t, echoServer(t))
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p.CutWhen(func(up, down int64) bool { return up >= 1 })
	p.CutWhen(nil)
	roundTrip(t, c, []byte("still flowing"))
	if p.Open() == 0 {
		t.Fatal("a disarmed cut closed the connection")
	}
}
