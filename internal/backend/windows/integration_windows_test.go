//go:build windows

package windows

// Integration tests for a real Windows host (10 or later). They drive the
// Engine directly, with this test binary as the program inside the
// container: TestMain turns it into a helper when MOAT_WINTEST_HELPER is
// set, so nothing but the binary and the system's own programs is needed.
// Every attack has a positive control: the same probe succeeds once the
// guarantee is lifted. Run them with
//
//	go test -count=1 -v ./internal/backend/windows
//
// and elevated for TestWindowsProxyNeedsAdministrator's second half.

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	xw "golang.org/x/sys/windows"

	"github.com/moat-sandbox/moat/internal/aclplan"
	"github.com/moat-sandbox/moat/internal/backend/windows/winapi"
	"github.com/moat-sandbox/moat/internal/spec"
)

const helperVar = "MOAT_WINTEST_HELPER"

func TestMain(m *testing.M) {
	if verb := os.Getenv(helperVar); verb != "" {
		os.Exit(helper(verb, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// helper is the program inside the container.
func helper(verb string, args []string) int {
	switch verb {
	case "args": // the argument vector as JSON
		b, _ := json.Marshal(args)
		os.Stdout.Write(b)
		return 0
	case "env":
		fmt.Print(os.Getenv(args[0]))
		return 0
	case "cat":
		b, err := os.ReadFile(args[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		os.Stdout.Write(b)
		return 0
	case "write":
		if err := os.WriteFile(args[0], []byte(args[1]), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "spawn": // run args[0] with args[1:], pass its output and code on
		c := exec.Command(args[0], args[1:]...)
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		if err := c.Run(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return ee.ExitCode()
			}
			return 1
		}
		return 0
	case "copy-run": // copy this binary to args[0] and run the copy
		self, _ := os.Executable()
		b, err := os.ReadFile(self)
		if err == nil {
			err = os.WriteFile(args[0], b, 0o755)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		return runCopy(args[0])
	case "acl-copy-run": // the same, creating the copy with an access list of its own
		self, _ := os.Executable()
		b, err := os.ReadFile(self)
		if err != nil {
			return 2
		}
		if err := createWithOwnACL(args[0], b); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		return runCopy(args[0])
	case "dial":
		c, err := net.DialTimeout("tcp", args[0], 3*time.Second)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		c.Close()
		return 0
	case "child": // start a sleeping child, print its pid, sleep or exit
		self, _ := os.Executable()
		c := exec.Command(self)
		c.Env = append(os.Environ(), helperVar+"=sleep")
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(c.Process.Pid)
		if len(args) > 0 && args[0] == "exit" {
			return 0
		}
		time.Sleep(5 * time.Minute)
		return 0
	case "sleep":
		time.Sleep(5 * time.Minute)
		return 0
	case "alloc": // commit args[0] MiB
		n, _ := strconv.Atoi(args[0])
		b := make([]byte, n<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		return 0
	case "echo":
		fmt.Print(strings.Join(args, " "))
		return 0
	case "prio": // this process's priority class
		c, err := xw.GetPriorityClass(xw.CurrentProcess())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("%#x", c)
		return 0
	case "spin": // burn CPU for up to a minute
		for end := time.Now().Add(time.Minute); time.Now().Before(end); {
		}
		return 0
	}
	return 99
}

func runCopy(path string) int {
	c := exec.Command(path)
	c.Env = append(os.Environ(), helperVar+"=echo")
	c.Args = []string{path, "ran"}
	out, err := c.Output()
	if err != nil || string(out) != "ran" {
		fmt.Fprintln(os.Stderr, "copy did not run:", err)
		return 3
	}
	fmt.Print("ran")
	return 0
}

// createWithOwnACL creates path with a security descriptor of the
// creator's choosing: full access, execute included, for ALL APPLICATION
// PACKAGES and Everyone.
func createWithOwnACL(path string, data []byte) error {
	sd, err := xw.SecurityDescriptorFromString("D:(A;;FA;;;AC)(A;;FA;;;WD)")
	if err != nil {
		return err
	}
	sa := &xw.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(*sa))
	p, _ := xw.UTF16PtrFromString(path)
	h, err := xw.CreateFile(p, xw.GENERIC_WRITE, 0, sa, xw.CREATE_NEW, xw.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(h), path)
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func randomID(t *testing.T) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// selfDir is the directory of this test binary, which every test grants
// read and execute so that the helper can run in the container.
func selfDir(t *testing.T) string {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(self)
}

// basePolicy is a strict, best-effort policy with a fresh working
// directory and private directories, and the test binary executable.
func basePolicy(t *testing.T) spec.Policy {
	root := t.TempDir()
	mk := func(name string) string {
		d := filepath.Join(root, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return spec.Policy{
		ID:         randomID(t),
		WorkDir:    mk("work"),
		Private:    spec.Private{Tmp: mk("tmp"), Home: mk("home")},
		Grants:     []spec.Grant{{Path: selfDir(t), Exec: true}},
		BestEffort: true,
	}
}

func newEngine(t *testing.T, p spec.Policy) *Engine {
	t.Helper()
	e, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

// run starts path with args in e, in dir (the working directory when
// empty), the helper verb set, and returns its combined output and exit
// code.
func run(t *testing.T, e *Engine, verb string, path string, args ...string) (string, int) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{helperVar + "=" + verb, "TEMP=" + e.policy.Private.Tmp, "TMP=" + e.policy.Private.Tmp,
		"PATH=" + os.Getenv("SystemRoot") + `\System32`, "HOME=" + e.policy.Private.Home}
	if verb == "" {
		env = env[1:]
	}
	c := &spec.Command{Path: path, Args: append([]string{path}, args...), Env: env, Dir: e.policy.WorkDir}
	p, err := e.Start(c, []*os.File{nil, w, w})
	w.Close()
	if err != nil {
		r.Close()
		t.Fatalf("start %s: %v", path, err)
	}
	var out bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&out, r); close(done) }()
	st, err := p.Wait()
	<-done
	r.Close()
	if err != nil {
		t.Fatalf("wait %s: %v", path, err)
	}
	return out.String(), st.ExitCode()
}

func self(t *testing.T) string {
	s, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func cmdExe() string { return filepath.Join(os.Getenv("SystemRoot"), "System32", "cmd.exe") }

// W1: %TEMP% is the container's own, under \Packages\, and a round trip
// through it works.
func TestWindowsSeedW1TempIsPrivate(t *testing.T) {
	e := newEngine(t, basePolicy(t))
	out, code := run(t, e, "env", self(t), "TEMP")
	if code != 0 || !strings.Contains(out, `\Packages\`) {
		t.Fatalf("TEMP = %q (exit %d), want a path under \\Packages\\", out, code)
	}
	f := out + `\w1.txt`
	if _, code := run(t, e, "write", self(t), f, "round-trip"); code != 0 {
		t.Fatal("cannot write the container's temp")
	}
	if got, code := run(t, e, "cat", self(t), f); code != 0 || got != "round-trip" {
		t.Fatalf("read back %q (exit %d)", got, code)
	}
	// What the container writes there does not run (3: written, refused).
	if got, code := run(t, e, "copy-run", self(t), out+`\w1.exe`); code != 3 {
		t.Fatalf("a program written to the container's temp: exit %d: %s", code, got)
	}
}

// W2: under a writable grant, the rustc .rmeta flow: create, mkdir,
// create in the child, rename over another file, del, rd /s /q.
func TestWindowsSeedW2WritableGrantRenamesAndRemoves(t *testing.T) {
	p := basePolicy(t)
	g := t.TempDir()
	p.Grants = append(p.Grants, spec.Grant{Path: g, Write: true})
	e := newEngine(t, p)
	script := `cd /d "` + g + `" && echo a> f1 && mkdir sub && echo b> sub\f2 && echo c> f3 && move /y f1 f3 && del f3 && rd /s /q sub && echo done`
	out, code := run(t, e, "", cmdExe(), "/d", "/c", script)
	if code != 0 || !strings.Contains(out, "done") {
		t.Fatalf("exit %d: %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(g, "sub")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("sub still there: %v", err)
	}
}

// W3: a file staged deeper than 300 characters is readable through a
// readable grant of a directory above it.
func TestWindowsSeedW3DeeperThanMaxPath(t *testing.T) {
	p := basePolicy(t)
	g := t.TempDir()
	deep := g
	for len(deep) < 320 {
		deep = filepath.Join(deep, strings.Repeat("d", 40))
	}
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(deep, "deep.txt")
	if err := os.WriteFile(f, []byte("deep-ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Positive control first: without the grant it is not readable.
	e0 := newEngine(t, p)
	if _, code := run(t, e0, "cat", self(t), f); code == 0 {
		t.Fatal("readable without a grant")
	}
	p.ID = randomID(t)
	p.Grants = append(p.Grants, spec.Grant{Path: g})
	e := newEngine(t, p)
	if out, code := run(t, e, "cat", self(t), f); code != 0 || out != "deep-ok" {
		t.Fatalf("%d-character path: %q (exit %d)", len(f), out, code)
	}
}

// stage copies findstr.exe and a file holding the needle into dir.
func stage(t *testing.T, dir string) (findstr, haystack string) {
	b, err := os.ReadFile(filepath.Join(os.Getenv("SystemRoot"), "System32", "findstr.exe"))
	if err != nil {
		t.Fatal(err)
	}
	findstr, haystack = filepath.Join(dir, "findstr.exe"), filepath.Join(dir, "haystack.txt")
	if err := os.WriteFile(findstr, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(haystack, []byte("hay\nneedle\nhay\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return findstr, haystack
}

func stagedPolicy(t *testing.T, dir string, exec bool) spec.Policy {
	p := basePolicy(t)
	p.Grants = append(p.Grants, spec.Grant{Path: dir, Exec: exec})
	return p
}

// W4: under a READ|EXEC grant, a runner inside the container spawns a
// staged findstr.exe, which finds the needle; without EXEC it cannot.
func TestWindowsSeedW4RunnerSpawnsStagedProgram(t *testing.T) {
	dir := t.TempDir()
	findstr, hay := stage(t, dir)
	e := newEngine(t, stagedPolicy(t, dir, true))
	if out, code := run(t, e, "spawn", self(t), findstr, "needle", hay); code != 0 || !strings.Contains(out, "needle") {
		t.Fatalf("exit %d: %s", code, out)
	}
	e = newEngine(t, stagedPolicy(t, dir, false))
	if _, code := run(t, e, "spawn", self(t), findstr, "needle", hay); code == 0 {
		t.Fatal("a read-only grant runs programs")
	}
}

// W5: as W4, with moat starting the staged program itself.
func TestWindowsSeedW5StagedProgramByFullPath(t *testing.T) {
	dir := t.TempDir()
	findstr, hay := stage(t, dir)
	e := newEngine(t, stagedPolicy(t, dir, true))
	if out, code := run(t, e, "", findstr, "needle", hay); code != 0 || !strings.Contains(out, "needle") {
		t.Fatalf("exit %d: %s", code, out)
	}
	e = newEngine(t, stagedPolicy(t, dir, false))
	_, err := e.Start(&spec.Command{Path: findstr, Args: []string{findstr, "needle", hay}, Dir: e.policy.WorkDir}, nil)
	var se *spec.StartError
	if !errors.As(err, &se) || se.Code != 126 {
		t.Fatalf("without EXEC: %v, want a 126 StartError", err)
	}
}

// W6: as W4, with the stage directly under the system drive's root.
func TestWindowsSeedW6StagedAtDriveRoot(t *testing.T) {
	dir := os.Getenv("SystemDrive") + `\moat-w6-` + randomID(t)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("staging under the drive root: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	findstr, hay := stage(t, dir)
	e := newEngine(t, stagedPolicy(t, dir, true))
	if out, code := run(t, e, "spawn", self(t), findstr, "needle", hay); code != 0 || !strings.Contains(out, "needle") {
		t.Fatalf("exit %d: %s", code, out)
	}
}

// The access lists hold exactly the planned entries while the sandbox
// lives, and none for its SID after Close.
func TestWindowsACLMatchesPlanAndIsRevoked(t *testing.T) {
	p := basePolicy(t)
	g := t.TempDir()
	if err := os.Mkdir(filepath.Join(g, "secret"), 0o700); err != nil {
		t.Fatal(err)
	}
	p.Grants = append(p.Grants, spec.Grant{Path: g, Write: true})
	p.View.Protected = []string{filepath.Join(g, "secret")}
	e, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	paths, entries := byPath(e.plan)
	if len(paths) == 0 {
		t.Fatal("empty plan")
	}
	for _, path := range paths {
		if err := checkApplied(path, entries[aclplan.Key(path)], e.c.sid); err != nil {
			t.Error(err)
		}
	}
	sid, _ := e.c.sid.Copy()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for _, path := range e.plan.Revoke {
		sd, err := xw.GetNamedSecurityInfo(aclplan.Extended(path), xw.SE_FILE_OBJECT, xw.DACL_SECURITY_INFORMATION)
		if errors.Is(err, xw.ERROR_FILE_NOT_FOUND) || errors.Is(err, xw.ERROR_PATH_NOT_FOUND) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		dacl, _, _ := sd.DACL()
		if own, _ := ownEntries(dacl, sid); len(own) != 0 {
			t.Errorf("%s keeps %d entries for the closed sandbox", path, len(own))
		}
	}
	if _, err := os.Stat(e.c.folder); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("profile folder %s left: %v", e.c.folder, err)
	}
}

// The profile's SID is the one its name derives.
func TestWindowsProfileSIDDerivesFromName(t *testing.T) {
	e, err := New(basePolicy(t))
	if err != nil {
		t.Fatal(err)
	}
	name, _ := xw.UTF16PtrFromString(e.c.name)
	var sid *xw.SID
	if err := winapi.DeriveAppContainerSidFromAppContainerName(name, &sid); err != nil {
		t.Fatal(err)
	}
	defer xw.FreeSid(sid)
	if !sid.Equals(e.c.sid) || !strings.HasPrefix(sid.String(), "S-1-15-2-") {
		t.Errorf("derived %s, created %s", sid, e.c.sid)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// A file outside every grant is unreadable; granted, it reads.
func TestWindowsUnreadableOutsideGrants(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "secret.txt")
	if err := os.WriteFile(f, []byte("token-value"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, basePolicy(t))
	if out, code := run(t, e, "cat", self(t), f); code == 0 {
		t.Fatalf("read outside the grants: %q", out)
	}
	p := basePolicy(t)
	p.Grants = append(p.Grants, spec.Grant{Path: dir})
	e = newEngine(t, p)
	if out, code := run(t, e, "cat", self(t), f); code != 0 || out != "token-value" {
		t.Fatalf("control: %q (exit %d)", out, code)
	}
}

// A protected path inside a grant stays unreadable, and cannot be removed
// through the writable grant; not protected, it reads.
func TestWindowsProtectedInsideGrant(t *testing.T) {
	dir := t.TempDir()
	ssh := filepath.Join(dir, ".ssh")
	if err := os.Mkdir(ssh, 0o700); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(ssh, "id_ed25519")
	if err := os.WriteFile(key, []byte("private"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := basePolicy(t)
	p.Grants = append(p.Grants, spec.Grant{Path: dir, Write: true})
	p.View.Protected = []string{strings.ToUpper(ssh)} // NTFS folds case; so must the plan
	e := newEngine(t, p)
	if out, code := run(t, e, "cat", self(t), key); code == 0 {
		t.Fatalf("protected key read: %q", out)
	}
	out, _ := run(t, e, "", cmdExe(), "/d", "/c", `rd /s /q "`+ssh+`" & move "`+ssh+`" "`+ssh+`.moved"`)
	if _, err := os.Stat(key); err != nil {
		t.Fatalf("protected key removed or moved: %v: %s", err, out)
	}
	p.ID, p.View.Protected = randomID(t), nil
	e = newEngine(t, p)
	if out, code := run(t, e, "cat", self(t), key); code != 0 || out != "private" {
		t.Fatalf("control: %q (exit %d)", out, code)
	}
	if out, code := run(t, e, "", cmdExe(), "/d", "/c", `rd /s /q "`+ssh+`"`); code != 0 {
		t.Fatalf("control: rd through the writable grant: exit %d: %s", code, out)
	}
	if _, err := os.Stat(ssh); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("control: %s not removed: %v", ssh, err)
	}
}

// Nothing the container writes with inherited entries runs; in build mode
// (the working directory executable) the same copy runs.
func TestWindowsWrittenFileDoesNotRun(t *testing.T) {
	p := basePolicy(t)
	e := newEngine(t, p)
	if out, code := run(t, e, "copy-run", self(t), filepath.Join(p.WorkDir, "copy.exe")); code != 3 {
		t.Fatalf("a written copy ran, or was not written (exit %d): %s", code, out)
	}
	p = basePolicy(t)
	p.ExecWorkDir = true
	e = newEngine(t, p)
	if out, code := run(t, e, "copy-run", self(t), filepath.Join(p.WorkDir, "copy.exe")); code != 0 {
		t.Fatalf("control: build mode (exit %d): %s", code, out)
	}
}

// The gap that makes write-xor-execute a Missing item: a file the
// container creates with an access list of its own runs. If this test
// fails, Windows has closed the gap and Missing can drop the item.
func TestWindowsKnownGapCreatorACLRuns(t *testing.T) {
	p := basePolicy(t)
	if m := strings.Join(Missing(&p), "\n"); !strings.Contains(m, "write-xor-execute") {
		t.Fatalf("Missing does not name the gap: %s", m)
	}
	e := newEngine(t, p)
	if out, code := run(t, e, "acl-copy-run", self(t), filepath.Join(p.WorkDir, "own.exe")); code != 0 {
		t.Fatalf("the copy with its own access list did not run (exit %d): %s", code, out)
	}
}

// Deny-all: no capability, so not even the host's loopback is reachable;
// the control is the host itself reaching the same listener.
func TestWindowsNoNetwork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	e := newEngine(t, basePolicy(t))
	if _, code := run(t, e, "dial", self(t), ln.Addr().String()); code == 0 {
		t.Fatal("the container reached the host's loopback")
	}
	if code := helper("dial", []string{ln.Addr().String()}); code != 0 {
		t.Fatal("control: the host cannot reach its own listener")
	}
}

// A proxy policy needs the loopback exemption: refused with a message
// naming the administrator when not elevated; elevated, the proxy's port
// is reachable, and the exemption is gone after Close.
func TestWindowsProxyNeedsAdministrator(t *testing.T) {
	p := basePolicy(t)
	probe, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.Network.ProxyPort = probe.Addr().(*net.TCPAddr).Port
	probe.Close()
	served := make(chan net.Listener, 1)
	p.Hooks.ServeProxy = func(l net.Listener) {
		served <- l
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	if !xw.GetCurrentProcessToken().IsElevated() {
		_, err := New(p)
		var se *SettingError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), "administrator") {
			t.Fatalf("not elevated: %v, want a SettingError naming the administrator", err)
		}
		return
	}
	e := newEngine(t, p)
	<-served
	if out, code := run(t, e, "dial", self(t), "127.0.0.1:"+strconv.Itoa(p.Network.ProxyPort)); code != 0 {
		t.Fatalf("the proxy port is unreachable: %s", out)
	}
	sid, _ := e.c.sid.Copy()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	list, err := loopbackExempt()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if s.Equals(sid) {
			t.Fatal("the loopback exemption outlives the sandbox")
		}
	}
}

func TestWindowsPermissiveRefused(t *testing.T) {
	p := basePolicy(t)
	p.Level = spec.LevelPermissive
	_, err := New(p)
	var se *SettingError
	if !errors.As(err, &se) || se.Setting != "isolation" {
		t.Fatalf("%v, want a SettingError for isolation", err)
	}
}

// alive reports whether process pid still runs, waiting up to 5 s for it
// to end.
func alive(t *testing.T, pid int) bool {
	h, err := xw.OpenProcess(xw.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return false
	}
	defer xw.CloseHandle(h)
	ev, _ := xw.WaitForSingleObject(h, 5000)
	return ev == uint32(xw.WAIT_TIMEOUT)
}

// startChild starts the helper that starts a sleeping grandchild and
// returns the command and the grandchild's pid.
func startChild(t *testing.T, e *Engine, mode string) (spec.Process, int) {
	r, w, _ := os.Pipe()
	s := self(t)
	c := &spec.Command{Path: s, Args: []string{s, mode}, Env: []string{helperVar + "=child"}, Dir: e.policy.WorkDir}
	proc, err := e.Start(c, []*os.File{nil, w, w})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 32)
	n, _ := r.Read(line)
	r.Close()
	pid, err := strconv.Atoi(strings.TrimSpace(string(line[:n])))
	if err != nil {
		t.Fatalf("child pid: %q", line[:n])
	}
	return proc, pid
}

// Close kills every process of the sandbox, grandchildren included.
func TestWindowsCloseKillsTree(t *testing.T) {
	e, err := New(basePolicy(t))
	if err != nil {
		t.Fatal(err)
	}
	_, pid := startChild(t, e, "stay")
	if !alive(t, pid) {
		t.Fatal("control: the grandchild is not running")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if alive(t, pid) {
		t.Fatal("a grandchild outlived Close")
	}
}

// Wait ends what is left of the command's tree, and only of that command.
func TestWindowsWaitEndsTree(t *testing.T) {
	e := newEngine(t, basePolicy(t))
	_, other := startChild(t, e, "stay")
	proc, pid := startChild(t, e, "exit")
	if _, err := proc.Wait(); err != nil {
		t.Fatal(err)
	}
	if alive(t, pid) {
		t.Fatal("the command's grandchild outlived Wait")
	}
	if !alive(t, other) {
		t.Fatal("Wait of one command ended another's tree")
	}
}

// The job's process limit holds for the tree; the memory limit fails an
// allocation past it; each with a control under the limit.
func TestWindowsJobLimits(t *testing.T) {
	p := basePolicy(t)
	p.Limits.Processes = 2
	p.Limits.MemoryBytes = 256 << 20
	e := newEngine(t, p)
	if _, code := run(t, e, "alloc", self(t), "512"); code == 0 {
		t.Error("allocated 512 MiB under a 256 MiB limit")
	}
	if _, code := run(t, e, "alloc", self(t), "64"); code != 0 {
		t.Error("control: 64 MiB under a 256 MiB limit failed")
	}
	// The runner and one child fit; a second child does not.
	s := self(t)
	if _, code := run(t, e, "spawn", s, cmdExe(), "/d", "/c", "exit 0"); code != 0 {
		t.Error("control: one child under a limit of 2 failed")
	}
	if _, code := run(t, e, "spawn", s, cmdExe(), "/d", "/c", cmdExe()+" /d /c exit 0"); code == 0 {
		t.Error("three processes under a limit of 2")
	}
}

// The job ends a process past its CPU time; the process state shows the
// user time that moat's limit report reads.
func TestWindowsJobCPUTime(t *testing.T) {
	p := basePolicy(t)
	p.Limits.CPUSeconds = 1
	e := newEngine(t, p)
	s := self(t)
	start := time.Now()
	proc, err := e.Start(&spec.Command{Path: s, Args: []string{s}, Env: []string{helperVar + "=spin"}, Dir: p.WorkDir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := proc.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if st.Success() || time.Since(start) > 30*time.Second || st.UserTime() < time.Second {
		t.Fatalf("exit %d after %v, user time %v: not ended at 1 s of CPU", st.ExitCode(), time.Since(start), st.UserTime())
	}
}

// Nice lowers the priority class of the sandbox's processes; without it
// the class is the host's normal one.
func TestWindowsPriorityClass(t *testing.T) {
	for nice, want := range map[int]uint32{0: xw.NORMAL_PRIORITY_CLASS, 5: xw.BELOW_NORMAL_PRIORITY_CLASS, 19: xw.IDLE_PRIORITY_CLASS} {
		p := basePolicy(t)
		p.Nice = nice
		e := newEngine(t, p)
		out, code := run(t, e, "prio", self(t))
		if code != 0 || out != fmt.Sprintf("%#x", want) {
			t.Errorf("nice %d: class %s (exit %d), want %#x", nice, out, code, want)
		}
	}
}

// The argument vector arrives unchanged, through CreateProcess and the Go
// runtime's parser of the command line.
func TestWindowsCommandLineRoundTrip(t *testing.T) {
	e := newEngine(t, basePolicy(t))
	args := []string{"", "a b", `a\`, `a b\`, `"`, `\"`, "tab\there", `C:\dir with space\`, `say "hi"`, "ünïcødé"}
	out, code := run(t, e, "args", self(t), args...)
	var got []string
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("exit %d: %s", code, out)
	}
	if strings.Join(got, "\x00") != strings.Join(args, "\x00") {
		t.Fatalf("got %q, want %q", got, args)
	}
}
