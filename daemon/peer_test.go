package daemon_test

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/daemon"
)

// adminTokens adds an admin token to accessTokens.
const adminTokens = `{"tokens": {
	"fin-secret": {"id": "fin", "groups": ["finance"]},
	"root-secret": {"id": "ops", "admin": true}
}}`

// runConnector is the SEMFS_TEST_ROLE=connector helper: it connects to
// the control socket, hands the connection to a holder child (this binary
// again, SEMFS_TEST_ROLE=holder) and exits at once.
func runConnector() int {
	c, err := net.Dial("unix", os.Getenv("SEMFS_SOCKET"))
	if err != nil {
		fmt.Println("dial:", err)
		return 1
	}
	f, err := c.(*net.UnixConn).File()
	if err != nil {
		fmt.Println("file:", err)
		return 1
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SEMFS_TEST_ROLE=holder")
	cmd.ExtraFiles = []*os.File{f}
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Println("holder:", err)
		return 1
	}
	return 0
}

// runHolder is the SEMFS_TEST_ROLE=holder helper: it waits for the file
// SEMFS_TEST_GO, then sends each line of SEMFS_TEST_REQ on the connection
// it inherited and prints each reply, then DONE.
func runHolder() int {
	conn := os.NewFile(3, "conn")
	for {
		if _, err := os.Stat(os.Getenv("SEMFS_TEST_GO")); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	r := bufio.NewReader(conn)
	for _, req := range strings.Split(os.Getenv("SEMFS_TEST_REQ"), "\n") {
		fmt.Fprintln(conn, req)
		line, _ := r.ReadString('\n')
		fmt.Printf("REPLY %s", line)
	}
	fmt.Println("DONE")
	return 0
}

// stalePeer connects to sock from a process that exits at once, leaving
// the connection to a holder that sends reqs once the file returned by
// stalePeer exists; the connecting pid and the holder's output file are
// returned too.
func stalePeer(t *testing.T, sock string, reqs ...string) (pid int, goFile, outFile string) {
	t.Helper()
	dir := t.TempDir()
	outFile, goFile = dir+"/holder.out", dir+"/GO"
	out, err := os.Create(outFile)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SEMFS_TEST_ROLE=connector", "SEMFS_SOCKET="+sock, "SEMFS_TEST_GO="+goFile,
		"SEMFS_TEST_REQ="+strings.Join(reqs, "\n"))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid, goFile, outFile
}

// holderDone waits for the holder's replies.
func holderDone(t *testing.T, outFile string) string {
	t.Helper()
	for range 200 {
		got, _ := os.ReadFile(outFile)
		if strings.Contains(string(got), "DONE") {
			return string(got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	got, _ := os.ReadFile(outFile)
	t.Fatalf("the holder did not finish: %s", got)
	return ""
}

// reusePid is a shell script that makes the next process forked take pid
// (through /proc/sys/kernel/ns_last_pid), starts bg in the background,
// prints "bgpid=PID", creates goFile and waits.
func reusePid(pid int, bg, goFile string) string {
	return "echo " + strconv.Itoa(pid-1) + " > /proc/sys/kernel/ns_last_pid; " + bg + " & echo bgpid=$!; touch " + goFile + "; wait"
}

func needNsLastPid(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/proc/sys/kernel/ns_last_pid"); err != nil {
		t.Skip("no /proc/sys/kernel/ns_last_pid to force a pid's reuse")
	}
}

// TestSocketPidReuse: a connection whose connecting process exited does
// not act as the process that holds its pid later (here a descendant of a
// process registered with the finance token): it is its uid with no
// groups, and it may not register.
func TestSocketPidReuse(t *testing.T) {
	needNsLastPid(t)
	mnt, sock, c, d := mountWithTokens(t, accessTokens)
	financeReport(t, mnt, c, d)
	pid, goFile, outFile := stalePeer(t, sock,
		`{"id":1,"op":"stat","args":{"path":"/reports/q3.txt"}}`,
		`{"id":2,"op":"register","args":{"app":"intruder"}}`)
	out := session(t, sock, "analyst", "fin-secret", "sh "+reusePid(pid, "sleep 5", goFile))
	if !strings.Contains(out, "bgpid="+strconv.Itoa(pid)) {
		t.Skipf("did not win the pid %d (another process took it): %s", pid, out)
	}
	got := holderDone(t, outFile)
	t.Logf("holder: %s", got)
	if strings.Contains(got, `"size":19`) || !strings.Contains(got, `"id":1,"error":{"code":"not_exist"`) {
		t.Errorf("a connection whose process exited acts as the finance session's child that took its pid; want not_exist:\n%s", got)
	}
	if !strings.Contains(got, `"id":2,"error":{"code":"permission"`) || !strings.Contains(got, "has exited") {
		t.Errorf("register over a connection whose process exited was not refused:\n%s", got)
	}
}

// TestMountPidReuse: registering over a connection whose process exited
// does not attribute the process that took its pid later; that process's
// writes through the mount stay its uid's.
func TestMountPidReuse(t *testing.T) {
	needNsLastPid(t)
	mnt, sock, c, _ := mountWithTokens(t, accessTokens)
	pid, goFile, outFile := stalePeer(t, sock, `{"id":1,"op":"register","args":{"app":"intruder","token":"fin-secret"}}`)
	dir := t.TempDir()
	written := dir + "/WRITE"
	// The process at the reused pid waits for the holder, then writes
	// through the mount itself (the shell opens the file).
	writer := `sh -c 'while [ ! -e ` + written + ` ]; do sleep 0.05; done; printf x > ` + mnt + `/reused.txt'`
	sh := exec.Command("sh", "-c", reusePid(pid, writer, goFile))
	var shOut strings.Builder
	sh.Stdout, sh.Stderr = &shOut, &shOut
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	defer sh.Wait()
	for range 100 {
		if _, err := os.Stat(goFile); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	got := holderDone(t, outFile)
	os.WriteFile(written, nil, 0o644)
	if err := sh.Wait(); err != nil {
		t.Fatalf("writer: %v: %s", err, shOut.String())
	}
	if !strings.Contains(shOut.String(), "bgpid="+strconv.Itoa(pid)) {
		t.Skipf("did not win the pid %d: %s", pid, shOut.String())
	}
	t.Logf("holder: %s", got)
	if !strings.Contains(got, `"code":"permission"`) {
		t.Errorf("register over a connection whose process exited succeeded:\n%s", got)
	}
	if by := waitCreatedBy(t, c, "/reused.txt"); by != "uid:0" {
		t.Errorf("the process that took a dead connection's pid writes as %q; want uid:0", by)
	}
}

// archiveHolds reports whether the archive at path holds needle in an
// entry.
func archiveHolds(t *testing.T, path, needle string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		_, err := tr.Next()
		if err != nil {
			return false
		}
		b, _ := io.ReadAll(tr)
		if strings.Contains(string(b), needle) {
			return true
		}
	}
}

// TestSnapshotNeedsAdmin: a snapshot holds every file, so a process
// registered with a token without admin, and a caller of another uid, are
// refused one; a process registered with an admin token, and root without
// a token, get it.
func TestSnapshotNeedsAdmin(t *testing.T) {
	mnt, sock, c, d := mountWithTokens(t, adminTokens)
	ctx := context.Background()
	financeReport(t, mnt, c, d)
	dir := t.TempDir()
	out := session(t, sock, "analyst", "fin-secret", "snapshot "+dir+"/fin.tgz")
	if !strings.Contains(out, "snapshot: err") || !strings.Contains(out, "needs an admin token") {
		t.Errorf("a session with a token without admin was not refused a snapshot:\n%s", out)
	}
	if _, err := os.Stat(dir + "/fin.tgz"); err == nil {
		t.Errorf("a refused snapshot left an archive")
	}
	if left, _ := filepath.Glob(dir + "/.semfs-snapshot-*"); len(left) > 0 {
		t.Errorf("a refused snapshot left %v", left)
	}

	// Another uid, over the raw protocol, asking for a path.
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	for d := filepath.Dir(sock); d != "/tmp" && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755) // the test's temporary directories are 0700
	}
	py := `import socket,sys
s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b'{"id":1,"op":"snapshot","args":{"out":"` + dir + `/other.tgz"}}\n')
print(s.makefile().readline())`
	cmd := exec.Command("/usr/bin/python3", "-c", py, sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("python3 as uid 65534: %v: %s", err, b)
	} else if !strings.Contains(string(b), `"code":"permission"`) || !strings.Contains(string(b), "needs an admin token") {
		t.Errorf("uid 65534 without a token was not refused a snapshot: %s", b)
	}
	if _, err := os.Stat(dir + "/other.tgz"); err == nil {
		t.Errorf("the daemon wrote an archive for uid 65534")
	}

	out = session(t, sock, "ops", "root-secret", "snapshot "+dir+"/admin.tgz")
	if !strings.Contains(out, "snapshot: err <nil>") || !archiveHolds(t, dir+"/admin.tgz", "TOP SECRET") {
		t.Errorf("an admin session did not get the whole tree:\n%s", out)
	}
	if _, err := c.Snapshot(ctx, dir+"/root.tgz"); err != nil || !archiveHolds(t, dir+"/root.tgz", "TOP SECRET") {
		t.Errorf("root without a token: snapshot %v", err)
	}
}

// TestSnapshotNotIntoMount: an archive is never written into the mount,
// where the daemon's write would make it an ordinary file that callers
// without the groups read; the error says where to write it.
func TestSnapshotNotIntoMount(t *testing.T) {
	mnt, sock, c, d := mountWithTokens(t, accessTokens)
	ctx := context.Background()
	os.MkdirAll(mnt+"/pub", 0o755)
	financeReport(t, mnt, c, d)
	_, err := c.Snapshot(ctx, mnt+"/pub/snap.tgz")
	if err == nil || !errors.Is(err, semfs.ErrInvalid) || !strings.Contains(err.Error(), "outside the mount") {
		t.Errorf("snapshot into the mount = %v; want an invalid error saying to write outside the mount", err)
	}
	// The daemon writing to a path of its own choosing, asked by root.
	nc, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	fmt.Fprintf(nc, `{"id":1,"op":"snapshot","args":{"out":%q}}`+"\n", mnt+"/pub/raw.tgz")
	reply, _ := bufio.NewReader(nc).ReadString('\n')
	if !strings.Contains(reply, "outside the mount") {
		t.Errorf("raw snapshot into the mount answered %s", reply)
	}
	if got := names(t, mnt+"/pub"); len(got) != 0 {
		t.Errorf("snapshots into the mount left %v in it", got)
	}
}

// TestTokenFile: a session takes its token from SEMFS_TOKEN_FILE and sees
// the group's file; the children it starts afterwards inherit neither
// variable.
func TestTokenFile(t *testing.T) {
	mnt, sock, c, d := mountWithTokens(t, accessTokens)
	financeReport(t, mnt, c, d)
	tokFile := t.TempDir() + "/token"
	os.WriteFile(tokFile, []byte("fin-secret\n"), 0o600)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SEMFS_TOKEN") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(env, "SEMFS_TEST_ROLE=session", "SEMFS_SOCKET="+sock, "SEMFS_TEST_APP=analyst", "SEMFS_TOKEN_FILE="+tokFile,
		"SEMFS_TEST_STEPS=stat /reports/q3.txt\nsh env | grep SEMFS_TOKEN || echo no-token-env; cat "+mnt+"/reports/q3.txt")
	b, err := cmd.Output()
	out := string(b)
	if err != nil {
		t.Fatalf("session: %v\n%s", err, out)
	}
	if !strings.Contains(out, "stat /reports/q3.txt: size 19, err <nil>") || !strings.Contains(out, "TOP SECRET") {
		t.Errorf("the session registered with SEMFS_TOKEN_FILE does not see the finance file:\n%s", out)
	}
	if !strings.Contains(out, "no-token-env") {
		t.Errorf("a child started after registering inherited the token variables:\n%s", out)
	}
}

// financeReport writes /reports/q3.txt through the mount, tags it for the
// finance group only, and waits until the daemon has indexed it.
func financeReport(t *testing.T, mnt string, c *client.Client, d *daemon.Main) {
	t.Helper()
	os.MkdirAll(mnt+"/reports", 0o755)
	if err := os.WriteFile(mnt+"/reports/q3.txt", []byte("TOP SECRET forecast"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.Tag(context.Background(), "/reports/q3.txt", semfs.Tags{Groups: []string{"finance"}}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, d)
}
