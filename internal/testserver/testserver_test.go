package testserver

import (
	"net"
	"os/exec"
	"strings"
	"testing"
)

func TestPostgresStartsAndRestarts(t *testing.T) {
	pg := StartPostgres(t)
	query := func() string {
		out, err := exec.Command("psql", pg.DSN, "-Atc", "select 40+2").CombinedOutput()
		if err != nil {
			t.Fatalf("psql: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := query(); got != "42" {
		t.Fatalf("select = %q", got)
	}
	pg.Stop()
	if c, err := net.Dial("tcp", strings.Split(strings.TrimPrefix(pg.DSN, "postgres://postgres@"), "/")[0]); err == nil {
		c.Close()
		t.Fatal("server still accepts connections after Stop")
	}
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	if got := query(); got != "42" {
		t.Fatalf("after restart select = %q", got)
	}
}

func TestS3StartsAndRestarts(t *testing.T) {
	s := StartS3(t)
	if c, err := net.Dial("tcp", s.Endpoint); err != nil {
		t.Fatalf("dial: %v", err)
	} else {
		c.Close()
	}
	s.Stop()
	if c, err := net.Dial("tcp", s.Endpoint); err == nil {
		c.Close()
		t.Fatal("still listening after Stop")
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
}
