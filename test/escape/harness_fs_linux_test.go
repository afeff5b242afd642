//go:build linux

package escape_test

// Helpers for the filesystem, process, hygiene, limits and lifecycle probes.

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
)

// randomHex returns n random bytes in hex, for names no stale file or
// process can collide with.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// sleepMarker returns a unique sleep duration such as "300.481516": a
// process running `sleep <marker>` can be found in /proc by its argument.
func sleepMarker(whole int) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	n := (int(b[0])<<16 | int(b[1])<<8 | int(b[2])) % 1000000
	return fmt.Sprintf("%d.%06d", whole, n)
}

// plantHome writes a decoy at rel under the invoking user's real home and,
// when the test ends, removes the file and the topmost directory it had to
// create, so nothing is left in the home.
func plantHome(t *testing.T, rel, content string) string {
	t.Helper()
	h := home(t)
	path := filepath.Join(h, rel)
	// Find the first missing ancestor: it and everything below it is ours.
	created := ""
	for d := filepath.Dir(path); d != h && d != "/" && d != "."; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); errors.Is(err, os.ErrNotExist) {
			created = d
		} else {
			break
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); err == nil {
		t.Fatalf("decoy %s already exists; refusing to overwrite a real file", path)
	}
	if err := moattest.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.Remove(path)
		if created != "" {
			os.RemoveAll(created)
		}
	})
	return path
}

// runCmd runs a prepared sandbox command and collects its output.
func runCmd(c *moat.Cmd) result {
	var out, errb bytes.Buffer
	if c.Stdout == nil {
		c.Stdout = &out
	}
	if c.Stderr == nil {
		c.Stderr = &errb
	}
	err := c.Run()
	return toResult(out.String(), errb.String(), err)
}

// shEnv runs a shell script in sb with extra Cmd.Env entries.
func shEnv(t *testing.T, sb *moat.Sandbox, env []string, script string) result {
	t.Helper()
	c := sb.Command("/bin/sh", "-c", script)
	c.Env = env
	return runCmd(c)
}

// exitError returns the *moat.ExitError in err, or fails the test.
func exitError(t *testing.T, err error) *moat.ExitError {
	t.Helper()
	var ee *moat.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("want a *moat.ExitError, got %T: %v", err, err)
	}
	return ee
}

// procsWithArg lists the host pids whose command line has an argument equal
// to arg (zombies excluded: they hold nothing).
func procsWithArg(arg string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(b) == 0 {
			continue
		}
		for _, a := range strings.Split(strings.TrimRight(string(b), "\x00"), "\x00") {
			if a == arg && !zombie(pid) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z'
}

// waitProcs polls until the number of live processes with arg satisfies ok
// or the timeout passes, and returns the last list seen.
func waitProcs(arg string, timeout time.Duration, ok func([]int) bool) ([]int, bool) {
	deadline := time.Now().Add(timeout)
	for {
		p := procsWithArg(arg)
		if ok(p) {
			return p, true
		}
		if time.Now().After(deadline) {
			return p, false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// mustAppear fails unless a process with arg shows up within timeout: the
// positive control that the /proc scan would see a survivor.
func mustAppear(t *testing.T, arg string, timeout time.Duration) {
	t.Helper()
	if _, ok := waitProcs(arg, timeout, func(p []int) bool { return len(p) > 0 }); !ok {
		t.Fatalf("control: no process with argument %s appeared within %v; the /proc scan cannot detect survivors", arg, timeout)
	}
}

// mustVanish fails unless every process with arg is gone within timeout,
// killing the survivors so no test leaves processes behind.
func mustVanish(t *testing.T, arg string, timeout time.Duration, what string) {
	t.Helper()
	left, ok := waitProcs(arg, timeout, func(p []int) bool { return len(p) == 0 })
	if !ok {
		for _, p := range left {
			_ = unix.Kill(p, unix.SIGKILL)
		}
		t.Fatalf("%s: processes %v (sleep %s) still alive %v later", what, left, arg, timeout)
	}
}

// killMarked kills what is left of a marker when the test ends, whatever
// happened, so a failing test does not leave sleeps behind.
func killMarked(t *testing.T, arg string) {
	t.Cleanup(func() {
		for _, p := range procsWithArg(arg) {
			_ = unix.Kill(p, unix.SIGKILL)
		}
	})
}

// hostSleep starts `sleep 60` on the host with extra environment entries;
// it is killed and reaped when the test ends.
func hostSleep(t *testing.T, env ...string) *exec.Cmd {
	t.Helper()
	c := exec.Command("/bin/sleep", "60")
	c.Env = append(os.Environ(), env...)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Process.Kill()
		_ = c.Wait()
	})
	return c
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	return unix.Kill(pid, 0) == nil && !zombie(pid)
}

// openPTY opens a new pseudo-terminal pair from the host's /dev/ptmx; both
// ends are closed when the test ends.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	rc, err := m.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n uint32
	var ioErr error
	err = rc.Control(func(fd uintptr) {
		unlock := int32(0)
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, fd, unix.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
			ioErr = fmt.Errorf("unlockpt: %w", e)
			return
		}
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, fd, unix.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
			ioErr = fmt.Errorf("ptsname: %w", e)
		}
	})
	if err != nil || ioErr != nil {
		t.Fatalf("pty: %v %v", err, ioErr)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty slave: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// drain reads what is available on f until it stays quiet for quiet.
func drain(f *os.File, quiet time.Duration) string {
	var out []byte
	buf := make([]byte, 256)
	for {
		_ = f.SetReadDeadline(time.Now().Add(quiet))
		n, err := f.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			return string(out)
		}
	}
}

// hostRAM is the host's physical memory in bytes.
func hostRAM(t *testing.T) int64 {
	t.Helper()
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		t.Fatal(err)
	}
	return int64(si.Totalram) * int64(si.Unit)
}

// fields parses "Key:\tvalue" lines, as in /proc/PID/status.
func fields(s string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}
