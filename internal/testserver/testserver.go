// Package testserver starts real servers for tests: an S3-compatible object
// store (versitygw) and PostgreSQL, each on a free loopback port, in a
// temporary directory that is removed when the test ends.
//
// A test skips only when the machine cannot run the server at all (the binary
// is not installed), and says how to install it; scripts/test.sh installs
// both, so CI never skips.
package testserver

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// S3 is a running S3-compatible server.
type S3 struct {
	Endpoint  string // host:port
	AccessKey string
	SecretKey string
	Dir       string // the server's backing directory

	cmd  *exec.Cmd
	args []string
	env  []string
	mu   sync.Mutex
}

// FreePort returns a free TCP port on 127.0.0.1.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testserver: no free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func findVersitygw() string {
	if p := os.Getenv("SEMFS_TEST_VERSITYGW"); p != "" {
		return p
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "versitygw")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// StartS3 starts versitygw over a fresh directory and stops it at cleanup.
func StartS3(t testing.TB) *S3 {
	t.Helper()
	bin := findVersitygw()
	if bin == "" {
		t.Skip("versitygw is not installed: run `go install github.com/versity/versitygw/cmd/versitygw@v1.8.0` (scripts/test.sh does)")
	}
	dir := t.TempDir()
	s := &S3{
		Endpoint:  fmt.Sprintf("127.0.0.1:%d", FreePort(t)),
		AccessKey: "semfs-test",
		SecretKey: "semfs-test-secret",
		Dir:       dir,
	}
	s.args = []string{"--port", s.Endpoint, "posix", dir}
	s.env = append(os.Environ(), "ROOT_ACCESS_KEY="+s.AccessKey, "ROOT_SECRET_KEY="+s.SecretKey)
	s.bin(bin)
	if err := s.Start(); err != nil {
		t.Fatalf("testserver: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

func (s *S3) bin(b string) { s.args = append([]string{b}, s.args...) }

// Start (re)starts the server after Stop.
func (s *S3) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return nil
	}
	cmd := exec.Command(s.args[0], s.args[1:]...)
	cmd.Env = s.env
	logf, err := os.Create(filepath.Join(filepath.Dir(s.Dir), "versitygw.log"))
	if err == nil {
		cmd.Stdout, cmd.Stderr = logf, logf
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start versitygw: %w", err)
	}
	s.cmd = cmd
	return waitTCP(s.Endpoint, 20*time.Second)
}

// Stop stops the server; Start brings it back over the same directory.
func (s *S3) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

func waitTCP(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("server at %s did not start within %v", addr, timeout)
}

// Postgres is a running PostgreSQL server with one database.
type Postgres struct {
	DSN  string // postgres://postgres@127.0.0.1:PORT/semfs?sslmode=disable
	Port int
	Dir  string

	pgctl string
	runAs func(args ...string) error
	mu    sync.Mutex
	up    bool
}

func pgBin(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(matches) > 0 {
		return matches[len(matches)-1]
	}
	return ""
}

// StartPostgres initialises a cluster in a fresh directory (as the postgres
// user when running as root, since initdb refuses root), starts it on a free
// loopback port, creates database "semfs", and stops and removes it at
// cleanup.
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	initdb, pgctl := pgBin("initdb"), pgBin("pg_ctl")
	if initdb == "" || pgctl == "" {
		t.Skip("PostgreSQL server binaries are not installed: apt-get install postgresql (scripts/test.sh does)")
	}
	base, err := os.MkdirTemp("", "semfs-pg-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(base, 0o777)
	p := &Postgres{Port: FreePort(t), Dir: filepath.Join(base, "data"), pgctl: pgctl}
	t.Cleanup(func() {
		p.Stop()
		os.RemoveAll(base)
	})
	run := func(args ...string) error {
		var cmd *exec.Cmd
		if os.Getuid() == 0 {
			cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--"}, args...)...)
		} else {
			cmd = exec.Command(args[0], args[1:]...)
		}
		cmd.Dir = base
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := run(initdb, "-D", p.Dir, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"); err != nil {
		t.Fatalf("testserver: initdb: %v", err)
	}
	conf := fmt.Sprintf("\nlisten_addresses = '127.0.0.1'\nport = %d\nunix_socket_directories = '%s'\nfsync = on\nmax_connections = 100\n", p.Port, base)
	f, err := os.OpenFile(filepath.Join(p.Dir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(conf)
	f.Close()
	p.runAs = run
	if err := p.Start(); err != nil {
		t.Fatalf("testserver: %v", err)
	}
	createdb := pgBin("createdb")
	if err := run(createdb, "-h", "127.0.0.1", "-p", strconv.Itoa(p.Port), "-U", "postgres", "semfs"); err != nil {
		t.Fatalf("testserver: createdb: %v", err)
	}
	p.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/semfs?sslmode=disable", p.Port)
	return p
}

// Start starts (or restarts) the server and waits until it accepts
// connections.
func (p *Postgres) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.up {
		return nil
	}
	if err := p.runAs(p.pgctl, "-D", p.Dir, "-l", filepath.Join(filepath.Dir(p.Dir), "pg.log"), "-w", "-t", "60", "start"); err != nil {
		return err
	}
	p.up = true
	return waitTCP(fmt.Sprintf("127.0.0.1:%d", p.Port), 30*time.Second)
}

// Stop stops the server (fast mode: clients are disconnected).
func (p *Postgres) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.up {
		return
	}
	p.runAs(p.pgctl, "-D", p.Dir, "-m", "fast", "-w", "stop")
	p.up = false
}

// Context returns a context that ends with the test.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}
