//go:build linux

package escape_test

// Nothing is left behind under a host program that is PID 1, as in a
// container without an init: such a program reaps only the children it
// waits for, so any helper moat forks and does not reap stays a zombie
// forever. The test binary re-executes itself as PID 1 of a new PID
// namespace (util-linux unshare), opens and closes sandboxes there, and
// counts its zombie children.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

// reapRoleEnv makes the test binary play the PID-1 host: "sandboxes" opens
// and closes sandboxes, "control" leaves one child unreaped on purpose.
const reapRoleEnv = "MOAT_ESCAPE_REAP_ROLE"

// zombieChildren counts this process's children that are zombies.
func zombieChildren() int {
	self := strconv.Itoa(os.Getpid())
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut at ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) >= 2 && f[0] == "Z" && f[1] == self {
			n++
		}
	}
	return n
}

// runReapRole plays the PID-1 host when TestReapUnderPID1Host re-executed
// the test binary with reapRoleEnv set, and exits; otherwise it returns at
// once. TestMain calls it before any test runs, so the role is no test.
func runReapRole() {
	role := os.Getenv(reapRoleEnv)
	if role == "" {
		return
	}
	fail := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "reap role %s: "+format+"\n", append([]any{role}, a...)...)
		os.Exit(1)
	}
	if os.Getpid() != 1 {
		fail("runs as pid %d, want 1", os.Getpid())
	}
	switch role {
	case "sandboxes":
		for i := 0; i < 20; i++ {
			sb, err := moat.New(moat.Config{Limits: moat.Limits{MemoryBytes: 256 << 20}})
			if err != nil {
				fail("%v", err)
			}
			if out, err := sb.Command("/bin/sh", "-c", "sleep 60 & echo ran").Output(); err != nil || !strings.Contains(string(out), "ran") {
				fail("command %d: %q %v", i, out, err)
			}
			if err := sb.Close(); err != nil {
				fail("%v", err)
			}
		}
	case "control":
		c := exec.Command("/bin/true")
		if err := c.Start(); err != nil {
			fail("%v", err)
		}
		// Deliberately never waited for.
	default:
		fail("unknown role")
	}
	// Give exiting helpers a moment to become zombies, then count.
	time.Sleep(time.Second)
	os.Stdout.WriteString("ZOMBIES " + strconv.Itoa(zombieChildren()) + "\n")
	os.Exit(0)
}

// 20 closed sandboxes leave no zombie under a PID-1 host. Control: a
// child the same host deliberately does not reap shows up as a zombie.
func TestReapUnderPID1Host(t *testing.T) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Fatalf("util-linux unshare is needed to run a host as PID 1: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := func(role string) int {
		t.Helper()
		// A new user namespace mapping our user to itself, a PID
		// namespace whose PID 1 is the test binary, and its own /proc.
		c := exec.Command(unshare, "--user", "--map-current-user", "--pid", "--fork", "--mount-proc", self)
		c.Env = append(os.Environ(), reapRoleEnv+"="+role)
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", role, err, out.String())
		}
		for _, line := range strings.Split(out.String(), "\n") {
			if v, ok := strings.CutPrefix(line, "ZOMBIES "); ok {
				n, err := strconv.Atoi(strings.TrimSpace(v))
				if err == nil {
					return n
				}
			}
		}
		t.Fatalf("%s: no zombie count in\n%s", role, out.String())
		return 0
	}
	if n := run("sandboxes"); n != 0 {
		t.Fatalf("20 closed sandboxes left %d zombies under a PID-1 host", n)
	}
	if n := run("control"); n != 1 {
		t.Fatalf("control: an unreaped child gave %d zombies, want 1: the count cannot see zombies", n)
	}
}
