//go:build linux

package escape_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/controlfiles"
	"github.com/moat-sandbox/moat/internal/homecontrol"
)

// moat exec's home (issue 23): the command's $HOME is the user's home,
// read-only but where the writable patterns say, and the home's run-code
// entries (shell rc files and profiles, autostart, systemd user units,
// PATH's directories, git's global configuration, the control-file
// table's rows) stay read-only, and cannot be created, even under
// writable: ["~"], unless a pattern names one exactly.
//
// The home is a fresh directory, $HOME for the test, so that the real one
// is never touched; moat's state lives outside it and the protections are
// off, so that nothing but the guard of the run-code entries keeps the
// home's top from being written (the protections' carve would freeze it
// otherwise, and hide whether the guard holds).

// noProtections switches off every protection that a policy document
// can, so that only the guard under test stands.
var noProtections = map[string]bool{
	"protectCredentials": false, "protectShellHistory": false, "protectPackageCredentials": false,
	"protectCloudConfig": false, "protectBrowserData": false, "protectKeychains": false,
}

// execHomeFixture makes a fresh home, sets $HOME and $XDG_STATE_HOME for
// the test, and returns the home and the cwd (home/proj).
func execHomeFixture(t *testing.T) (home, cwd string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, state := filepath.Join(base, "home"), filepath.Join(base, "state")
	cwd = filepath.Join(home, "proj")
	for _, d := range []string{cwd, filepath.Join(home, "scratch"), state} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", state)
	return home, cwd
}

// execHomeDirs are the run-code entries the fixture makes directories.
var execHomeDirs = []string{".bashrc.d", ".zshrc.d", ".oh-my-zsh", ".config/fish", ".config/nushell", ".config/environment.d",
	".config/autostart", ".config/plasma-workspace", ".local/share/applications", ".config/systemd", ".local/share/systemd",
	".local/bin", "bin", "go/bin", ".config/git", ".config/nvim", ".emacs.d", ".config/direnv", ".vscode", ".idea", ".claude",
	".cursor", ".codex", ".gemini", ".agents", ".pi", ".devcontainer"}

// execHomePath is the PATH the tests pass: one directory inside the home
// besides the usual ones.
const execHomePath = "/usr/local/bin:/usr/bin:/bin:$HOME/go/bin"

// execHomeEntries are the run-code entries of home, relative.
func execHomeEntries(home string) []string {
	var out []string
	for _, p := range homecontrol.Paths(home, strings.ReplaceAll(execHomePath, "$HOME", home)) {
		out = append(out, strings.TrimPrefix(p, home+"/"))
	}
	return out
}

// attackScript tries, on each entry, every way to change it: write,
// append, rename over, unlink and recreate, swap for a link, and for a
// directory the same on a file inside it and on the directory itself.
// A missing entry is created, as a file and as a directory.
func attackScript(entries []string) string {
	var b strings.Builder
	b.WriteString(`cd "$HOME"; mkdir -p scratch/d; printf evil > scratch/evil; printf evil > scratch/d/evil; n=0; ` +
		`atk() { n=$((n+1)); e="$HOME/$1"; mkdir -p "$(dirname "$e")" 2>/dev/null; ` +
		`if [ -d "$e" ]; then printf X > "$e/atk" 2>/dev/null; cp scratch/evil "$e/" 2>/dev/null; mv -T scratch/d "$e" 2>/dev/null; ` +
		`rm -rf "$e" 2>/dev/null; mkdir "$e" 2>/dev/null; printf X > "$e/atk" 2>/dev/null; ln -sfn "$HOME/scratch" "$e" 2>/dev/null; ` +
		`elif [ -e "$e" ] || [ -L "$e" ]; then printf X > "$e" 2>/dev/null; printf X >> "$e" 2>/dev/null; ` +
		`cp scratch/evil "scratch/r$n" && mv -f "scratch/r$n" "$e" 2>/dev/null; rm -f "$e" 2>/dev/null; printf X > "$e" 2>/dev/null; ` +
		`ln -sf "$HOME/scratch/evil" "$e" 2>/dev/null; ` +
		`else printf X > "$e" 2>/dev/null || mkdir "$e" 2>/dev/null || ln -s "$HOME/scratch/evil" "$e" 2>/dev/null; fi; }; `)
	for _, e := range entries {
		b.WriteString(`atk "` + e + `"; `)
	}
	b.WriteString(`echo ordinary >> notes && echo made > scratch/new && printf done`)
	return b.String()
}

// makeEntries gives each entry its original content: "orig" in a file,
// or a file "orig" in a directory.
func makeEntries(t *testing.T, home string, entries []string) {
	t.Helper()
	for _, e := range entries {
		p := filepath.Join(home, e)
		if slices.Contains(execHomeDirs, e) {
			writeFile(t, filepath.Join(p, "orig"), "orig")
		} else {
			writeFile(t, p, "orig")
		}
	}
}

// entryIntact reports why the entry e of home is not as makeEntries left
// it, or "".
func entryIntact(home, e string) string {
	p := filepath.Join(home, e)
	fi, err := os.Lstat(p)
	switch {
	case err != nil:
		return err.Error()
	case fi.Mode()&os.ModeSymlink != 0:
		return "swapped for a link"
	case fi.IsDir():
		names, err := os.ReadDir(p)
		if err != nil || len(names) != 1 || names[0].Name() != "orig" {
			return "the directory's entries changed"
		}
		p = filepath.Join(p, "orig")
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "orig" {
		return "content " + string(b)
	}
	return ""
}

func execHomeDoc(script string, writable []string) map[string]any {
	return map[string]any{
		"command":     []string{"/bin/sh", "-c", script},
		"filesystem":  map[string]any{"writable": writable},
		"protections": noProtections,
	}
}

// TestExecHomeRunCodeEntries attacks every run-code entry of the home
// under writable: ["~"], existing and missing, then repeats each attack
// with a pattern that names every entry exactly (the positive control).
func TestExecHomeRunCodeEntries(t *testing.T) {
	t.Run("existing", func(t *testing.T) {
		home, cwd := execHomeFixture(t)
		entries := execHomeEntries(home)
		makeEntries(t, home, entries)
		writeFile(t, filepath.Join(home, "notes"), "notes\n")
		res := execPolicyPath(t, execHomeDoc(attackScript(entries), []string{"~"}), cwd, home)
		if res.Code != 0 || !strings.HasSuffix(res.Stdout, "done") {
			t.Fatalf("the attack did not finish: %s", res)
		}
		for _, e := range entries {
			if why := entryIntact(home, e); why != "" {
				t.Errorf("~/%s under writable [\"~\"]: %s; want it read-only", e, why)
			}
		}
		fileIs(t, filepath.Join(home, "notes"), "notes\nordinary\n")
		fileIs(t, filepath.Join(home, "scratch/new"), "made\n")
	})
	t.Run("existing, control: each named exactly", func(t *testing.T) {
		home, cwd := execHomeFixture(t)
		entries := execHomeEntries(home)
		makeEntries(t, home, entries)
		writeFile(t, filepath.Join(home, "notes"), "notes\n")
		writable := []string{"~"}
		for _, e := range entries {
			writable = append(writable, "~/"+e)
		}
		res := execPolicyPath(t, execHomeDoc(attackScript(entries), writable), cwd, home)
		if res.Code != 0 || !strings.HasSuffix(res.Stdout, "done") {
			t.Fatalf("the attack did not finish: %s", res)
		}
		for _, e := range onlyGuarded(home, entries) {
			if entryIntact(home, e) == "" {
				t.Errorf("~/%s named exactly: unchanged; want the pattern to make it writable", e)
			}
		}
	})
	t.Run("missing", func(t *testing.T) {
		home, cwd := execHomeFixture(t)
		entries := execHomeEntries(home)
		writeFile(t, filepath.Join(home, "notes"), "notes\n")
		res := execPolicyPath(t, execHomeDoc(attackScript(entries), []string{"~"}), cwd, home)
		if res.Code != 0 || !strings.HasSuffix(res.Stdout, "done") {
			t.Fatalf("the attack did not finish: %s", res)
		}
		for _, e := range entries {
			if _, err := os.Lstat(filepath.Join(home, e)); err == nil {
				t.Errorf("~/%s under writable [\"~\"]: created; want its creation blocked", e)
			}
		}
		fileIs(t, filepath.Join(home, "notes"), "notes\nordinary\n")
		fileIs(t, filepath.Join(home, "scratch/new"), "made\n")
	})
	t.Run("missing, control: each named exactly", func(t *testing.T) {
		// Nothing can be created at the top of a writable home (it is
		// sealed), named or not: the control makes the top-level
		// directories that hold the nested entries, and checks those.
		home, cwd := execHomeFixture(t)
		entries := execHomeEntries(home)
		writeFile(t, filepath.Join(home, "notes"), "notes\n")
		var nested []string
		for _, e := range entries {
			if top, _, ok := strings.Cut(e, "/"); ok {
				if err := os.MkdirAll(filepath.Join(home, top), 0o700); err != nil {
					t.Fatal(err)
				}
				nested = append(nested, e)
			}
		}
		writable := []string{"~"}
		for _, e := range entries {
			writable = append(writable, "~/"+e)
		}
		res := execPolicyPath(t, execHomeDoc(attackScript(entries), writable), cwd, home)
		if res.Code != 0 || !strings.HasSuffix(res.Stdout, "done") {
			t.Fatalf("the attack did not finish: %s", res)
		}
		for _, e := range onlyGuarded(home, nested) {
			if _, err := os.Lstat(filepath.Join(home, e)); err != nil {
				t.Errorf("~/%s named exactly: %v; want the pattern to let it be created", e, err)
			}
		}
		for _, e := range entries {
			if _, err := os.Lstat(filepath.Join(home, e)); err == nil && !strings.Contains(e, "/") {
				t.Errorf("~/%s named exactly: created at the top of the sealed home", e)
			}
		}
	})
}

// TestExecHomeLinkedRunCode: an rc file (one that is not a curated
// toolchain entry, which moat binds read-only anyway) that is a link into a dotfiles
// directory (as dotfile managers make them) stays read-only at its
// target, and the link cannot be replaced. The control names the link
// exactly, which makes its target writable.
func TestExecHomeLinkedRunCode(t *testing.T) {
	script := `printf X >> "$HOME/.zlogin" 2>/dev/null; rm -f "$HOME/.zlogin" 2>/dev/null; printf X > "$HOME/.zlogin" 2>/dev/null; ` +
		`printf X >> "$HOME/dotfiles/zlogin" 2>/dev/null; printf done`
	for _, tt := range []struct {
		name     string
		writable []string
		intact   bool
	}{
		{"writable home", []string{"~"}, true},
		{"control: the link named exactly", []string{"~", "~/.zlogin"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			home, cwd := execHomeFixture(t)
			writeFile(t, filepath.Join(home, "dotfiles/zlogin"), "orig")
			if err := os.Symlink("dotfiles/zlogin", filepath.Join(home, ".zlogin")); err != nil {
				t.Fatal(err)
			}
			res := execPolicyPath(t, execHomeDoc(script, tt.writable), cwd, home)
			if res.Code != 0 || res.Stdout != "done" {
				t.Fatalf("the attack did not finish: %s", res)
			}
			if l, err := os.Readlink(filepath.Join(home, ".zlogin")); tt.intact && (err != nil || l != "dotfiles/zlogin") {
				t.Errorf("~/.zlogin: %q, %v; want the link kept", l, err)
			}
			b, _ := os.ReadFile(filepath.Join(home, "dotfiles/zlogin"))
			if intact := string(b) == "orig"; intact != tt.intact {
				t.Errorf("the link's target holds %q; want it intact: %v", b, tt.intact)
			}
		})
	}
}

// onlyGuarded drops the entries that moat keeps read-only by other means
// as well, so that a control naming them exactly cannot show them
// writable: the control-file table's rows at the top of a writable place
// (pinned, or set aside at Close when the run made them) and the home's
// curated toolchain entries (bound read-only and executable).
func onlyGuarded(home string, entries []string) []string {
	curated := moat.ToolchainPaths(home)
	var out []string
	for _, e := range entries {
		if controlfiles.Top(e) != controlfiles.None || slices.Contains(controlfiles.NestedRunsCode(), e) || underAny(filepath.Join(home, e), curated) {
			continue
		}
		out = append(out, e)
	}
	if len(out) < 10 {
		panic("onlyGuarded: too few entries left for a meaningful control")
	}
	return out
}

func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// execPolicyPath is execPolicy with PATH holding a directory of the home,
// as the test's PATH and the command's.
func execPolicyPath(t *testing.T, doc map[string]any, cwd, home string) result {
	t.Helper()
	return execPolicyEnv(t, doc, cwd, []string{"HOME=" + home, "PATH=" + strings.ReplaceAll(execHomePath, "$HOME", home)})
}
