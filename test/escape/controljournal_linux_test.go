//go:build linux

package escape_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

// The run journal and the quarantine (controljournal.go): what a sandbox
// creates at the top of a writable place leaves the place at Close, or,
// when moat was killed before Close, at the next New, for a quarantine in
// the user's moat state directory, which no sandbox reaches.

// stateRoot is the moat state directory of this user, as moat picks it.
func stateRoot(t *testing.T) string {
	t.Helper()
	if x := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "moat")
	}
	return filepath.Join(home(t), ".local", "state", "moat")
}

// isolateState gives the test (not parallel) a moat state directory of its
// own, in the home like the real one, so that no other test's or test
// binary's New sweeps the journals of the runs it kills before it looks.
// The roles it starts inherit it.
func isolateState(t *testing.T) {
	t.Helper()
	d, err := os.MkdirTemp(filepath.Join(home(t)), ".moat-escape-state-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	t.Setenv("XDG_STATE_HOME", d)
}

// controlEntryNames are the names that must not be left at a place's top.
var controlEntryNames = []string{".moat-", ".heimdall-", ".agents", ".pi", ".git"}

// leftControlEntries lists the control-named entries at dir's top.
func leftControlEntries(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		for _, p := range controlEntryNames {
			if strings.HasPrefix(e.Name(), p) {
				out = append(out, e.Name())
				break
			}
		}
	}
	return out
}

// quarantinedAt returns where sb's Refusal of kind says subject went, when
// that lies in the quarantine of the state directory; "" otherwise.
func quarantinedAt(t *testing.T, rs []moat.Refusal, kind, subject string) string {
	t.Helper()
	q := filepath.Join(stateRoot(t), "quarantine") + "/"
	for _, r := range rs {
		if r.Kind != kind || r.Subject != subject {
			continue
		}
		_, dest, ok := strings.Cut(r.Detail, "moved to ")
		if !ok {
			continue
		}
		dest, _, _ = strings.Cut(dest, ";")
		dest, _, _ = strings.Cut(dest, " (")
		if rest, ok := strings.CutPrefix(dest, q); ok {
			id, _, _ := strings.Cut(rest, "/")
			t.Cleanup(func() { _ = os.RemoveAll(filepath.Join(q, id)) })
			return dest
		}
	}
	return ""
}

// TestControlNamesQuarantinedOutside (Heimdall's L11): after a run with a
// writable cwd, none of the control names the sandbox created, nor any
// quarantined copy of them, is left in the cwd; each Refusal names its
// quarantine path in the state directory, and the content is there. The
// control writes a regular file, which stays, and checks that the
// sandbox did create every name (its script says so).
func TestControlNamesQuarantinedOutside(t *testing.T) {
	names := []string{".moat-write", ".moat-deny", ".heimdall-write", ".agents", ".pi", ".git"}
	script := "echo ok > regular.txt; for f in " + strings.Join(names, " ") + "; do echo '**' > $f || exit 1; done; echo PLANTED"
	for _, place := range []struct {
		name string
		cfg  func(d string) moat.Config
	}{
		{"supplied workdir", func(d string) moat.Config { return moat.Config{WorkDir: d} }},
		{"write grant", func(d string) moat.Config {
			return moat.Config{Grants: []moat.Grant{{Path: d, Access: moat.READ | moat.WRITE}}}
		}},
	} {
		t.Run(place.name, func(t *testing.T) {
			d := docCwd(t)
			sb, err := moat.New(place.cfg(d))
			if err != nil {
				t.Fatal(err)
			}
			r := sh(t, sb, "cd "+shq(d)+" && "+script)
			if err := sb.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if !stdoutLine(r, "PLANTED") {
				t.Fatalf("control: the sandbox did not create the names, so the test proves nothing: %s", r)
			}
			if left := leftControlEntries(t, d); len(left) > 0 {
				t.Errorf("left in the place after Close: %v (%s)", left, snapshot(d))
			}
			for _, n := range names {
				kind := "control-path"
				if n == ".git" {
					kind = "git-control"
				}
				q := quarantinedAt(t, sb.Refusals(), kind, filepath.Join(d, n))
				if q == "" {
					t.Errorf("no %s Refusal names a quarantine path for %s: %v", kind, n, sb.Refusals())
					continue
				}
				if b, err := os.ReadFile(q); err != nil || string(b) != "**\n" {
					t.Errorf("quarantined %s at %s: %q, %v", n, q, b, err)
				}
			}
			fileIs(t, filepath.Join(d, "regular.txt"), "ok\n")
		})
	}
}

// crashRoleEnv makes the test binary run a sandbox in the directory it
// names that plants a .moat-write holding ** and a .git/config, say so,
// and wait to be killed: a moat killed by SIGKILL mid-run. With
// crashDenyEnv it denies that path too (a placeholder on the host).
const (
	crashRoleEnv = "MOAT_ESCAPE_CRASH_ROLE"
	crashDenyEnv = "MOAT_ESCAPE_CRASH_DENY"
)

func init() {
	dir := os.Getenv(crashRoleEnv)
	if dir == "" {
		return
	}
	cfg := moat.Config{WorkDir: dir}
	if d := os.Getenv(crashDenyEnv); d != "" {
		cfg.Deny = []string{d}
	}
	sb, err := moat.New(cfg)
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	c := sb.Command("sh", "-c", `echo '**' > .moat-write && mkdir .git && printf '[core]\n\tfsmonitor = touch /tmp/pwned\n' > .git/config && mkdir -p sub/.git && cp .git/config sub/.git/config && echo PLANTED && sleep 600`)
	c.Dir = dir
	out, err := c.StdoutPipe()
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	if err := c.Start(); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	fmt.Println("READY", strings.TrimSpace(line))
	select {}
}

// killCrashRole starts the crash role on dir (with deny, when not empty),
// waits until its sandbox planted, and kills it with SIGKILL.
func killCrashRole(t *testing.T, dir, deny string) {
	t.Helper()
	// Its zygote and sandbox die with it.
	killRoleMidRun(t, "READY PLANTED", 200*time.Millisecond, crashRoleEnv+"="+dir, crashDenyEnv+"="+deny)
}

// TestCrashedRunControlNamesSwept: moat is killed by SIGKILL mid-run
// after its sandbox planted .moat-write (holding **), .git/config and a
// repository in a subdirectory (sub/.git/config) in the supplied cwd. The
// next New, of a config without that place, sweeps them into the
// quarantine before its first command: the cwd holds none of them, and a
// policy document run there afterwards, with an empty policy, cannot
// write in the cwd (the planted ** is gone). Controls: right after the
// kill the planted entries are on the host; the user's .moat-deny and
// repository in user/, there before the crashed run, stay.
func TestCrashedRunControlNamesSwept(t *testing.T) {
	isolateState(t)
	d := docCwd(t)
	writeFile(t, filepath.Join(d, ".moat-deny"), "the user's\n")
	writeFile(t, filepath.Join(d, "user", ".git", "HEAD"), "ref: refs/heads/main\n")
	killCrashRole(t, d, "")
	if !exists(filepath.Join(d, ".moat-write")) || !exists(filepath.Join(d, ".git", "config")) || !exists(filepath.Join(d, "sub", ".git", "config")) {
		t.Fatalf("control: after the SIGKILL nothing planted is left, so the test proves nothing: %s", snapshot(d))
	}
	sb, err := moat.New(moat.Config{}) // another place altogether
	if err != nil {
		t.Fatal(err)
	}
	// Before any command of the new sandbox runs.
	left := leftControlEntries(t, d)
	sb.Close()
	if strings.Join(left, " ") != ".moat-deny" {
		t.Errorf("after the next New the cwd holds %v (%s); want only the user's .moat-deny", left, snapshot(d))
	}
	fileIs(t, filepath.Join(d, ".moat-deny"), "the user's\n")
	fileIs(t, filepath.Join(d, "user", ".git", "HEAD"), "ref: refs/heads/main\n")
	if exists(filepath.Join(d, "sub", ".git")) {
		t.Errorf("after the next New the repository the sandbox made in sub/ is still there: %s", snapshot(filepath.Join(d, "sub")))
	}
	for _, n := range []string{".moat-write", ".git", "sub/.git"} {
		q := quarantinedAt(t, sb.Refusals(), "control-path", filepath.Join(d, n))
		if q == "" {
			t.Errorf("no control-path Refusal names the quarantine of %s: %v", n, sb.Refusals())
			continue
		}
		if !strings.Contains(strings.Join(refusalDetails(sb.Refusals()), "\n"), "without closing") {
			t.Errorf("the Refusal does not say a crashed run left it: %v", sb.Refusals())
		}
		if strings.HasSuffix(n, ".git") {
			q = filepath.Join(q, "config")
		}
		if _, err := os.Stat(q); err != nil {
			t.Errorf("quarantined %s: %v", n, err)
		}
	}
	// The planted ** no longer widens a run in that cwd.
	r := runDocument(t, map[string]any{"command": []string{"sh", "-c", "echo x > w && echo WROTE"}}, d)
	if strings.Contains(r.Stdout, "WROTE") || exists(filepath.Join(d, "w")) {
		t.Errorf("an empty policy wrote into the cwd after the crash: %v", r)
	}
}

func refusalDetails(rs []moat.Refusal) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Detail)
	}
	return out
}

// TestCrashedRunDenyPlaceholdersSwept: moat is killed by SIGKILL while
// its engine guards a missing denied path with a placeholder (and the
// missing directory on its way). The next New, of a config without that
// deny, removes both and says so. Control: right after the kill the
// placeholder is on the host.
func TestCrashedRunDenyPlaceholdersSwept(t *testing.T) {
	isolateState(t)
	d := docCwd(t)
	denied := filepath.Join(d, "way", "secret")
	killCrashRole(t, d, denied)
	if !exists(denied) {
		t.Fatalf("control: after the SIGKILL no placeholder is left, so the test proves nothing: %s", snapshot(d))
	}
	sb, err := moat.New(moat.Config{})
	if err != nil {
		t.Fatal(err)
	}
	sb.Close()
	absent(t, denied, filepath.Join(d, "way"))
	found := false
	for _, r := range sb.Refusals() {
		found = found || r.Kind == "control-path" && r.Subject == denied && strings.Contains(r.Detail, "without closing")
	}
	if !found {
		t.Errorf("no control-path Refusal names the removed placeholder %s: %v", denied, sb.Refusals())
	}
}

// TestJournalAndQuarantineUnreachable: a sandbox at the permissive level
// with the home unprotected (everything readable and writable but the
// protected paths) can neither list, read nor write the moat state
// directory that holds its own run's journal and the quarantine. The
// control runs the same probe on the host, where it succeeds; a grant of
// the state directory itself, or of a directory in it, is refused by New.
func TestJournalAndQuarantineUnreachable(t *testing.T) {
	journalProbes(t, moat.Strict)
}

// TestJournalAndQuarantineUnreachableWithoutNamespaces: the same, with
// Landlock alone holding the protected path (no mount namespace, so best
// effort: control paths cannot be pinned).
func TestJournalAndQuarantineUnreachableWithoutNamespaces(t *testing.T) {
	withoutNamespaces(t, func(t *testing.T) { journalProbes(t, moat.BestEffort) })
}

// journalProbes tries the journal and the quarantine from a sandbox that
// sees all of the home but the protected paths, under enf.
func journalProbes(t *testing.T, enf moat.Enforcement) {
	root := stateRoot(t)
	sec := moat.IsolationPermissive.Security()
	sec.ProtectUserHome = false
	for _, tt := range []struct {
		name  string
		grant bool
	}{{"protected", false}, {"control: the probe on the host", true}} {
		t.Run(tt.name, func(t *testing.T) {
			d := docCwd(t)
			cfg := moat.Config{WorkDir: d, Isolation: moat.IsolationPermissive, Security: &sec, Enforcement: enf}
			sb, err := moat.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close()
			j := filepath.Join(root, "journal")
			probe := fmt.Sprintf(`cat %s/*.json && echo READ-OK; echo x > %s/evil.json && echo WRITE-OK; mkdir -p %s/quarantine/x && echo QWRITE-OK`, shq(j), shq(j), shq(root))
			var r result
			if tt.grant {
				out, err := exec.Command("sh", "-c", probe).Output()
				r = toResult(string(out), "", err)
			} else {
				r = sh(t, sb, probe)
			}
			got := stdoutLine(r, "READ-OK") || stdoutLine(r, "WRITE-OK") || stdoutLine(r, "QWRITE-OK")
			if got != tt.grant {
				t.Errorf("reached the state directory: %v, want %v: %s", got, tt.grant, r)
			}
			_ = os.Remove(filepath.Join(j, "evil.json"))
			_ = os.RemoveAll(filepath.Join(root, "quarantine", "x"))
		})
	}
}

// TestStateDirectoryPlacesRefused: a grant, working directory or home that
// is moat's state directory, or lies in it, is refused by New before
// anything is created: a sandbox that could write there could erase the
// record of the places it may have written and forge a trusted file.
// Control: a grant of the directory above it is accepted (the state
// directory is then hidden: TestJournalAndQuarantineUnreachable).
func TestStateDirectoryPlacesRefused(t *testing.T) {
	root := stateRoot(t)
	for _, tt := range []struct {
		name    string
		cfg     moat.Config
		refused bool
	}{
		{"grant of the state directory", moat.Config{Grants: []moat.Grant{{Path: root, Access: moat.READ | moat.WRITE}}}, true},
		{"read-only grant of its journal", moat.Config{Grants: []moat.Grant{{Path: filepath.Join(root, "journal"), Access: moat.READ}}}, true},
		{"working directory in it", moat.Config{WorkDir: filepath.Join(root, "quarantine")}, true},
		{"home in it", moat.Config{Home: filepath.Join(root, "home")}, true},
		{"control: a grant of the directory above", moat.Config{Grants: []moat.Grant{{Path: filepath.Dir(root), Access: moat.READ}}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sb, err := moat.New(tt.cfg)
			if err == nil {
				sb.Close()
			}
			var pe *moat.PlaceError
			if got := errors.As(err, &pe); got != tt.refused {
				t.Fatalf("refused: %v (%v), want %v", got, err, tt.refused)
			}
			if tt.refused && !strings.Contains(err.Error(), "state directory") {
				t.Errorf("the refusal does not say why: %v", err)
			}
		})
	}
}
