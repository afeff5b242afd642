//go:build linux

package escape_test

// The supervisor names what the kernel refuses inside the sandbox without
// telling moat: an exec that write-xor-execute refuses, in any process of
// the sandbox, and a socket family or type the seccomp filter refuses. Each
// shows as a "moat: " line naming what allows it, and in Refusals(); the
// controls show that what is allowed, or refused for another reason,
// prints nothing, and that the kernel's answer (EACCES, EPERM) is
// unchanged.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

// moatLines returns the lines of r's stderr that start with "moat: " and prefix.
func moatLinesOf(r result, prefix string) []string {
	var out []string
	for _, l := range strings.Split(r.Stderr, "\n") {
		if strings.HasPrefix(l, "moat: "+prefix) {
			out = append(out, l)
		}
	}
	return out
}

// needSupervisor skips, loudly, where the sandbox has no supervisor: no
// user namespaces, or a kernel without what the socket guard needs (then
// the exit-126 hint is all there is, see internal/buildmode: Mode.NoteExit).
func needSupervisor(t *testing.T) {
	t.Helper()
	sb := newSandbox(t, moat.Config{})
	needNamespaces(t, sb)
	for _, l := range sb.Report().Layers {
		if l.Name == "unix-sockets" && !l.Active {
			t.Skipf("PRECONDITION MISSING: this host cannot run the sandbox's supervisor (%s)", l.Detail)
		}
	}
}

// TestExecRefusalNamed: a file written in the sandbox that a child runs
// (go test's test binary, make's ./app, a script in the home) is refused
// by write-xor-execute, and moat says so with --build, in its output and
// in Refusals(). The command's own error stays the kernel's.
func TestExecRefusalNamed(t *testing.T) {
	needSupervisor(t)
	execGoPath(t)
	need(t, "make")
	home := t.TempDir()
	for _, tc := range []struct {
		name    string
		files   map[string]string // planted in the working directory, mode 0755
		args    []string          // after moat run --workdir DIR --home HOME
		subject string            // the refused file, relative to the working directory; "" for the home's
		inHome  string            // or the refused file, relative to the home
		inTmp   string            // or the refused file's start, in the private temp
		only    bool              // the detail says build mode covers only the working directory
	}{
		{
			name: "go test",
			files: map[string]string{
				"go.mod":    "module m\n\ngo 1.21\n",
				"m_test.go": "package m\n\nimport \"testing\"\n\nfunc TestOK(t *testing.T) {}\n",
			},
			// The test binary is linked in the private temp.
			args:  []string{"--env", "GOTOOLCHAIN=local", "--env", "GOFLAGS=-mod=mod", "--env", "CGO_ENABLED=0", "--", "go", "test", "./..."},
			inTmp: "/tmp/go-build",
			only:  true,
		},
		{
			name:    "make run",
			files:   map[string]string{"Makefile": "run:\n\t./app\n", "app": "#!/bin/sh\necho APP-RAN\n"},
			args:    []string{"--", "make", "run"},
			subject: "app",
		},
		{
			name:   "script in the home, in a grandchild",
			files:  map[string]string{"run.sh": "#!/bin/sh\nmkdir -p \"$HOME/tmp\" && cp /bin/true \"$HOME/tmp/tool\" && sh -c '\"$HOME/tmp/tool\"'\n"},
			args:   []string{"--", "sh", "run.sh"},
			inHome: "tmp/tool",
			only:   true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.files {
				plant(t, filepath.Join(dir, name), content)
				if err := os.Chmod(filepath.Join(dir, name), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			args := append([]string{"run", "--workdir", dir, "--home", home}, tc.args...)
			r := moatCLI(t, dir, nil, args...)
			if r.Code == 0 {
				t.Fatalf("the command succeeded, so nothing was refused: %v", r)
			}
			mustContain(t, r, "ermission denied") // the kernel's own answer, unchanged
			lines := moatLinesOf(r, "exec: ")
			if len(lines) != 1 {
				t.Fatalf("want one moat: exec line, got %q:\n%v", lines, r)
			}
			l := lines[0]
			want := filepath.Join(dir, tc.subject)
			switch {
			case tc.inHome != "":
				want = filepath.Join(home, tc.inHome)
			case tc.inTmp != "":
				want = tc.inTmp
			}
			if !strings.HasPrefix(l, "moat: exec: "+want) || !strings.Contains(l, "write-xor-execute") || !strings.HasSuffix(l, "(--build, Config.Build)") {
				t.Errorf("exec line %q, want it to name %s, write-xor-execute and --build", l, want)
			}
			if only := strings.Contains(l, "only the working directory"); only != tc.only {
				t.Errorf("exec line %q: says build mode covers only the working directory: %v, want %v", l, only, tc.only)
			}
		})
	}
}

// TestExecRefusalInRefusals: the library's Refusals() lists the exec a
// grandchild was refused, with --build; the same sandbox's controls (a
// missing program, a written file without an execute bit, a hundred runs
// of /bin/true) add nothing.
func TestExecRefusalInRefusals(t *testing.T) {
	needSupervisor(t)
	dir := t.TempDir()
	plant(t, filepath.Join(dir, "app"), "#!/bin/sh\necho APP-RAN\n")
	if err := os.Chmod(filepath.Join(dir, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	plant(t, filepath.Join(dir, "plain"), "#!/bin/sh\necho PLAIN-RAN\n") // 0644: EACCES, not write-xor-execute
	sb := newSandbox(t, moat.Config{WorkDir: dir})

	controls := sh(t, sb, `./missing; ./plain; i=0; while [ $i -lt 100 ]; do /bin/true || exit 9; i=$((i+1)); done; echo DONE`)
	mustContain(t, controls, "DONE")
	mustContain(t, controls, "not found")
	mustContain(t, controls, "ermission denied") // ./plain
	if rs := sb.Refusals(); len(rs) != 0 {
		t.Fatalf("controls recorded refusals: %v", rs)
	}

	r := sh(t, sb, `sh -c 'sh -c ./app'; echo rc=$?`)
	mustContain(t, r, "rc=126")
	mustNotContain(t, r, "APP-RAN")
	ref, ok := findRefusal(sb.Refusals(), "exec", filepath.Join(dir, "app"))
	if !ok {
		t.Fatalf("Refusals() does not list %s: %v", filepath.Join(dir, "app"), sb.Refusals())
	}
	if ref.Allow != "--build, Config.Build" || ref.Setting != "build" || !strings.Contains(ref.Detail, "write-xor-execute") {
		t.Errorf("refusal %q, want write-xor-execute and --build", ref.String())
	}
	if n := len(sb.Refusals()); n != 1 {
		t.Errorf("want exactly one refusal, got %d: %v", n, sb.Refusals())
	}
}

// TestExecRefusalBuildModeControl: with --build the working directory's
// ./app runs and nothing is printed; a file the same run writes in the
// home is still refused, and named without --build (which would not help)
// but with what build mode covers.
func TestExecRefusalBuildModeControl(t *testing.T) {
	needSupervisor(t)
	need(t, "make")
	dir := t.TempDir()
	plant(t, filepath.Join(dir, "Makefile"), "run:\n\t./app\nhome:\n\tcp app \"$$HOME/app\" && \"$$HOME/app\"\n")
	plant(t, filepath.Join(dir, "app"), "#!/bin/sh\necho APP-RAN\n")
	if err := os.Chmod(filepath.Join(dir, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := moatCLI(t, dir, nil, "run", "--build", "--workdir", dir, "--", "make", "run")
	mustContain(t, r, "APP-RAN")
	if r.Code != 0 || strings.Contains(r.Stderr, "moat:") {
		t.Fatalf("build mode: want ./app to run and no moat: line: %v", r)
	}
	r = moatCLI(t, dir, nil, "run", "--build", "--workdir", dir, "--", "make", "home")
	lines := moatLinesOf(r, "exec: ")
	if len(lines) != 1 || !strings.Contains(lines[0], "only the working directory") || strings.Contains(lines[0], "(--build") {
		t.Fatalf("build mode, a file in the home: want one exec line saying build mode covers only the working directory, naming no flag: %q\n%v", lines, r)
	}
}

// TestExecRefusalControlsPrintNothing: a command that runs /bin/true a
// hundred times, and one that runs a program that does not exist, print
// no moat: line.
func TestExecRefusalControlsPrintNothing(t *testing.T) {
	needSupervisor(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, script string
		code         int
	}{
		{"hundred execs", `i=0; while [ $i -lt 100 ]; do /bin/true || exit 9; i=$((i+1)); done`, 0},
		{"missing program", `./no-such-program`, 127},
		{"missing absolute", `/nonexistent/bin/tool`, 127},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := moatCLI(t, dir, nil, "run", "--workdir", dir, "--", "sh", "-c", tc.script)
			if r.Code != tc.code {
				t.Fatalf("exit %d, want %d: %v", r.Code, tc.code, r)
			}
			if strings.Contains(r.Stderr, "moat:") {
				t.Fatalf("a moat: line for a run where write-xor-execute refused nothing: %v", r)
			}
		})
	}
}

// TestSocketRefusalNamed: a socket the filter refuses fails as it always
// did (EPERM) and is named, with what the sandbox may open instead; an
// allowed socket (Unix, TCP) prints nothing.
func TestSocketRefusalNamed(t *testing.T) {
	needSupervisor(t)
	need(t, "python3")
	dir := t.TempDir()
	for _, tc := range []struct {
		name, family, typ string
		subject           string // "" when allowed, "-" when refused without a line
	}{
		{"udp", "AF_INET", "SOCK_DGRAM", "udp socket (AF_INET, SOCK_DGRAM)"},
		{"udp6", "AF_INET6", "SOCK_DGRAM", "udp socket (AF_INET6, SOCK_DGRAM)"},
		{"control: netlink", "AF_NETLINK", "SOCK_RAW", "-"}, // refused (EPERM) but not named: libc's getifaddrs probes it
		{"packet", "AF_PACKET", "SOCK_DGRAM", "socket (AF_PACKET, SOCK_DGRAM)"},
		{"control: unix", "AF_UNIX", "SOCK_DGRAM", ""},
		{"control: tcp", "AF_INET", "SOCK_STREAM", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prog := "import socket, errno\ntry:\n    socket.socket(socket." + tc.family + ", socket." + tc.typ + ")\n    print('OPENED')\nexcept OSError as e:\n    print('REFUSED', errno.errorcode[e.errno])\n"
			r := moatCLI(t, dir, nil, "run", "--workdir", dir, "--", "python3", "-c", prog)
			lines := moatLinesOf(r, "socket: ")
			if tc.subject == "-" {
				mustContain(t, r, "REFUSED EPERM")
				if strings.Contains(r.Stderr, "moat:") {
					t.Fatalf("a netlink socket printed a moat: line: %v", r)
				}
				return
			}
			if tc.subject == "" {
				mustContain(t, r, "OPENED")
				if strings.Contains(r.Stderr, "moat:") {
					t.Fatalf("an allowed socket printed a moat: line: %v", r)
				}
				return
			}
			mustContain(t, r, "REFUSED EPERM")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "moat: socket: "+tc.subject+": the sandbox may open only ") {
				t.Fatalf("want one line naming %q: %q\n%v", tc.subject, lines, r)
			}
			if tc.name == "udp" && !strings.Contains(lines[0], "DNS") {
				t.Errorf("the UDP line %q does not say where DNS goes", lines[0])
			}
		})
	}
}

// TestSupervisorFloodBounded: a sandbox that runs 100,000 refused execs
// of 200 different written files and 100,000 refused socket() calls of
// many families, from many threads, finishes, and the supervisor's
// record stays bounded (64 of each kind); the sandbox still works after.
func TestSupervisorFloodBounded(t *testing.T) {
	needSupervisor(t)
	need(t, "python3")
	dir := t.TempDir()
	for i := 0; i < 200; i++ {
		p := filepath.Join(dir, "bin", "tool"+strings.Repeat("x", i%7)+"-"+randomHex(3))
		plant(t, p, "#!/bin/sh\n")
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sb := newSandbox(t, moat.Config{WorkDir: dir})
	start := time.Now()
	r := python(t, sb, `
import os, socket, threading
tools = sorted(os.path.join("bin", n) for n in os.listdir("bin"))
counts = {"exec": 0, "socket": 0}
lock = threading.Lock()
def execs(k):
    n = 0
    for i in range(100000 // 8):
        try:
            os.execv(tools[(i * 8 + k) % len(tools)], ["x"])
        except PermissionError:
            n += 1
    with lock:
        counts["exec"] += n
def sockets(k):
    n = 0
    for i in range(100000 // 8):
        try:
            socket.socket(2 + (i + k) % 44, 1 + (i // 44) % 5).close()
        except OSError:
            n += 1
    with lock:
        counts["socket"] += n
ts = [threading.Thread(target=f, args=(k,)) for k in range(8) for f in (execs, sockets)]
for t in ts: t.start()
for t in ts: t.join()
print("EXEC-REFUSED", counts["exec"])
print("SOCKET-REFUSED-OVER", counts["socket"] > 90000)
`)
	took := time.Since(start)
	mustContain(t, r, "EXEC-REFUSED 100000")
	mustContain(t, r, "SOCKET-REFUSED-OVER True")
	byKind := map[string]int{}
	for _, ref := range sb.Refusals() {
		byKind[ref.Kind]++
	}
	// 64 of each kind unless their bytes (6 KiB a kind) run out first,
	// and one that counts the rest; sockets keep, past the 64, the first
	// of each network family and type (at most 18).
	if byKind["exec"] < 33 || byKind["exec"] > 65 || byKind["socket"] < 33 || byKind["socket"] > 64+18+1 {
		t.Errorf("refusals by kind %v: want 33 to 65 exec (of 200 files) and 33 to 83 socket (of 200 kinds)", byKind)
	}
	t.Logf("200,000 supervised refusals in %v; recorded %v", took.Round(time.Millisecond), byKind)
	// The sandbox still runs commands, and the record still dedupes.
	mustContain(t, sh(t, sb, "echo STILL-HERE"), "STILL-HERE")
}
