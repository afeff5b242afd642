//go:build linux

package escape_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/homecontrol"
)

// moat exec's home, hidden entries (issue 23, review 1): under a writable
// pattern that names no hidden place (writable: ["~"], ["~/**"]), every
// hidden entry at the home's top stays read-only and cannot be created,
// whatever file class it holds; only a pattern whose text names a hidden
// place opens it, and inside it the run-code entries stay protected. No
// placeholder is put in the home for the run.

// hiddenAttackPaths are the files the review planted under
// writable: ["~"], each of which makes a host tool run code later.
var hiddenAttackPaths = []string{
	".config/user-tmpfiles.d/x.conf", ".config/go/env", ".config/vim/vimrc", ".config/emacs/init.el",
	".config/emacs/early-init.el", ".local/share/nvim/site/plugin/x.lua", ".local/share/nvim/site/pack/x/start/y/plugin/z.lua",
	".config/tmux/tmux.conf", ".local/share/bash-completion/completions/git", ".local/share/fish/vendor_conf.d/x.fish",
	".local/share/fish/vendor_functions.d/ls.fish", ".config/autostart-scripts/x.sh", ".config/i3/config",
	".config/sway/config", ".config/hypr/hyprland.conf", ".config/awesome/rc.lua", ".config/openbox/autostart",
	".config/lxsession/LXDE/autostart", ".config/labwc/autostart", ".local/share/dbus-1/services/x.service",
	".local/share/thumbnailers/x.thumbnailer", ".config/dconf/user", ".local/share/gnome-shell/extensions/x/extension.js",
	".config/pipewire/pipewire.conf.d/x.conf", ".config/Code/User/settings.json", ".config/Code/User/tasks.json",
	".config/Cursor/User/settings.json", ".config/zed/tasks.json", ".config/sublime-text/Packages/User/x.py",
	".config/hg/hgrc", ".config/jj/config.toml", ".config/lesskey", ".config/gdb/gdbinit", ".config/ghc/ghci.conf",
	".config/sqlite3/sqliterc", ".config/starship.toml", ".config/kitty/kitty.conf", ".config/wezterm/wezterm.lua",
	".config/powershell/Microsoft.PowerShell_profile.ps1", ".config/xonsh/rc.xsh", ".config/pip/pip.conf",
	".config/uv/uv.toml", ".config/containers/containers.conf", ".cargo/bin/git", ".local/share/pnpm/git",
	".local/share/mise/shims/git", ".local/share/flatpak/exports/bin/git", ".config/composer/vendor/bin/x",
	// Top-level ones, besides the home-control list.
	".gdbinit", ".tmux.conf", ".newtool/rc",
}

// plantHiddenScript tries to create, or append to, each path, then does the
// ordinary work the controls check.
func plantHiddenScript(paths []string) string {
	var b strings.Builder
	b.WriteString(`cd "$HOME"; `)
	for _, p := range paths {
		q := `"$HOME/` + p + `"`
		b.WriteString(`mkdir -p "$(dirname ` + q + `)" 2>/dev/null; printf X >> ` + q + ` 2>/dev/null; chmod +x ` + q + ` 2>/dev/null; `)
	}
	b.WriteString(`echo ordinary >> notes.txt && echo made > projects/x && printf done`)
	return b.String()
}

// hiddenHome makes the fixture: a home with ~/.config and ~/.local/share
// present and empty (~/.cargo missing), ~/notes.txt and ~/projects; with
// existing set, every attack path exists too, holding "orig".
func hiddenHome(t *testing.T, existing bool) (home, cwd string) {
	t.Helper()
	home, cwd = execHomeFixture(t)
	// moat's own cache stores live outside the home, as its state does
	// (a missing protected ~/.cache/moat would fix ~/.cache's top).
	cache := filepath.Join(filepath.Dir(home), "cache")
	if err := os.MkdirAll(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", cache)
	for _, d := range []string{".config", ".local/share", "projects"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(home, "notes.txt"), "notes\n")
	if existing {
		for _, p := range hiddenAttackPaths {
			writeFile(t, filepath.Join(home, p), "orig")
		}
	}
	return home, cwd
}

// TestExecHomeHiddenEntries plants every file of hiddenAttackPaths under
// writable patterns that name no hidden place, missing and existing; the
// controls in the same run (an existing ~/notes.txt, a new file in
// ~/projects) show that the home's ordinary places stay writable.
func TestExecHomeHiddenEntries(t *testing.T) {
	for _, tt := range []struct {
		name      string
		writable  []string
		cwdIsHome bool
	}{
		{"writable home", []string{"~"}, false},
		{"writable home, everything below", []string{"~/**"}, true},
		{"writable cwd that is the home", []string{"."}, true},
	} {
		for _, existing := range []bool{false, true} {
			name := tt.name + ", missing"
			if existing {
				name = tt.name + ", existing"
			}
			t.Run(name, func(t *testing.T) {
				home, cwd := hiddenHome(t, existing)
				if tt.cwdIsHome {
					cwd = home
				}
				res := execPolicyPath(t, execHomeDoc(plantHiddenScript(hiddenAttackPaths), tt.writable), cwd, home)
				if res.Code != 0 || !strings.HasSuffix(res.Stdout, "done") {
					t.Fatalf("the run did not finish: %s", res)
				}
				for _, p := range hiddenAttackPaths {
					b, err := os.ReadFile(filepath.Join(home, p))
					switch {
					case existing && (err != nil || string(b) != "orig"):
						t.Errorf("~/%s under %q: %q, %v; want it unchanged", p, tt.writable, b, err)
					case !existing && err == nil:
						t.Errorf("~/%s under %q: created; want its creation blocked", p, tt.writable)
					}
				}
				fileIs(t, filepath.Join(home, "notes.txt"), "notes\nordinary\n")
				fileIs(t, filepath.Join(home, "projects/x"), "made\n")
			})
		}
	}
}

// TestExecHomeHiddenEntriesControl is the positive control: the same
// probe on the same existing files, each named exactly by a pattern,
// changes every one that moat does not pin by other means (onlyGuarded).
// A file inside a run-code entry (~/.config/hg/hgrc in ~/.config/hg) is
// named through that entry: naming a path inside one does not lift the
// entry's guard.
func TestExecHomeHiddenEntriesControl(t *testing.T) {
	home, cwd := hiddenHome(t, true)
	writable := []string{"~"}
	for _, p := range hiddenAttackPaths {
		name := p
		for _, e := range homecontrol.Names {
			if strings.HasPrefix(p, e+"/") && len(e) < len(name) {
				name = e
			}
		}
		writable = append(writable, "~/"+name)
	}
	res := execPolicyPath(t, execHomeDoc(plantHiddenScript(hiddenAttackPaths), writable), cwd, home)
	if res.Code != 0 || !strings.HasSuffix(res.Stdout, "done") {
		t.Fatalf("the run did not finish: %s", res)
	}
	for _, p := range onlyGuarded(home, hiddenAttackPaths) {
		if b, err := os.ReadFile(filepath.Join(home, p)); err != nil || string(b) != "origX" {
			t.Errorf("~/%s named exactly: %q, %v; want the probe to append", p, b, err)
		}
	}
}

// TestExecHomeHiddenOpened: a pattern that names a hidden place makes it
// writable (control), while the run-code entries inside it, the review's
// ones included, stay protected, and the other hidden entries stay
// read-only.
func TestExecHomeHiddenOpened(t *testing.T) {
	inConfig := []string{}
	for _, p := range hiddenAttackPaths {
		if strings.HasPrefix(p, ".config/") {
			inConfig = append(inConfig, p)
		}
	}
	for _, tt := range []struct {
		name     string
		writable []string
		writes   string   // a file the run may create
		blocked  []string // files it may not
	}{
		{"home and ~/.cache", []string{"~", "~/.cache"}, ".cache/someapp/x",
			append([]string{".config/autostart/x.desktop", ".local/share/fish/vendor_conf.d/x.fish"}, inConfig...)},
		{"~/.config alone", []string{"~/.config"}, ".config/someapp/x",
			append([]string{".config/autostart/x.desktop", ".config/fish/config.fish", ".config/git/config", ".config/systemd/user/x.service"}, inConfig...)},
		{"home and ~/.config/**", []string{"~", "~/.config/"}, ".config/someapp/x", inConfig},
	} {
		t.Run(tt.name, func(t *testing.T) {
			home, cwd := hiddenHome(t, false)
			if err := os.MkdirAll(filepath.Join(home, ".cache"), 0o700); err != nil {
				t.Fatal(err)
			}
			paths := append([]string{tt.writes}, tt.blocked...)
			res := execPolicyPath(t, execHomeDoc(plantHiddenScript(paths), append(tt.writable, "~/notes.txt", "~/projects")), cwd, home)
			if res.Code != 0 || !strings.HasSuffix(res.Stdout, "done") {
				t.Fatalf("the run did not finish: %s", res)
			}
			fileIs(t, filepath.Join(home, tt.writes), "X")
			for _, p := range tt.blocked {
				if _, err := os.Lstat(filepath.Join(home, p)); err == nil {
					t.Errorf("~/%s under %q: created; want its creation blocked", p, tt.writable)
				}
			}
		})
	}
}

// homeListing lists every name under home (recursively, not following
// links), with its kind.
func homeListing(t *testing.T, home string) string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		out = append(out, strings.TrimPrefix(p, home)+" "+d.Type().String())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TestExecHomeNoPlaceholders: under writable: ["~"] the host's listing of
// the home is the same before, during and after a run (no placeholder
// for a missing ~/.gitconfig, ~/.bashrc, ...), and host git works during
// the run. The control is the same run with a cwd control name that does
// get a placeholder: a pattern that opens a hidden place where a missing
// run-code entry must be held (~/.config/fish), which shows that the
// listing would see one.
func TestExecHomeNoPlaceholders(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("PRECONDITION MISSING: git is not installed; the host-git check needs it")
	}
	for _, tt := range []struct {
		name        string
		writable    []string
		placeholder []string // listing lines that must show during the run; nil for none
	}{
		{"writable home", []string{"~"}, nil},
		{"control: an opened ~/.config holds its missing entries", []string{"~", "~/.config"},
			[]string{"/.config/fish d---------", "/.config/lesskey ----------"}}, // a file where the real thing is one
	} {
		t.Run(tt.name, func(t *testing.T) {
			home, cwd := hiddenHome(t, false)
			repo := filepath.Join(home, "projects", "repo")
			before := homeListing(t, home)
			gitEnv := append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1")
			wantList, _ := (&exec.Cmd{Path: git, Args: []string{"git", "config", "--global", "--list"}, Env: gitEnv}).CombinedOutput()
			var during string
			var gitOut []byte
			var gitErr error
			res := execPolicyStart(t, execHomeDoc("sleep 2; printf done", tt.writable), cwd,
				[]string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin"}, func() {
					during = homeListing(t, home)
					c := exec.Command(git, "init", "-q", repo)
					c.Env = gitEnv
					gitOut, gitErr = c.CombinedOutput()
					if gitErr == nil {
						c = exec.Command(git, "config", "--global", "--list")
						c.Env = gitEnv
						out, _ := c.CombinedOutput()
						if string(out) != string(wantList) {
							gitErr, gitOut = os.ErrInvalid, out
						}
					}
				})
			if res.Code != 0 || res.Stdout != "done" {
				t.Fatalf("the run did not finish: %s", res)
			}
			if gitErr != nil {
				t.Errorf("host git during the run: %v: %s", gitErr, gitOut)
			}
			if err := os.RemoveAll(repo); err != nil {
				t.Fatal(err)
			}
			after := homeListing(t, home)
			if after != before {
				t.Errorf("the home's listing after the run differs:\n%s\nbefore:\n%s", after, before)
			}
			if tt.placeholder == nil && during != before {
				t.Errorf("the home's listing during the run differs (a placeholder):\n%s\nbefore:\n%s", during, before)
			}
			for _, line := range tt.placeholder {
				if !slices.Contains(strings.Split(during, "\n"), line) {
					t.Errorf("control: no %q during the run; the listing cannot see the placeholder:\n%s", line, during)
				}
			}
		})
	}
}

// TestExecHomeSealedAtEveryLevel: under writable: ["~"], at each
// isolation level, with the protections off and on, nothing can be
// created at the home's top (a plain name or a hidden one) and an
// existing hidden file stays read-only; in the same run, an existing
// ~/notes.txt is appended to and ~/projects/x created (the controls).
func TestExecHomeSealedAtEveryLevel(t *testing.T) {
	script := `cd "$HOME"; mkdir newdir 2>/dev/null; printf X > newfile 2>/dev/null; printf X > .newhidden 2>/dev/null; ` +
		`printf X >> .bashrc 2>/dev/null; mv projects projects2 2>/dev/null; ` +
		`cat .ssh/id_rsa 2>/dev/null; ` +
		`echo ordinary >> notes.txt && echo made > projects/x && printf done`
	for _, level := range []string{"strict", "default", "permissive"} {
		for _, prot := range []bool{false, true} {
			name := level + ", protections off"
			if prot {
				name = level + ", protections on"
			}
			t.Run(name, func(t *testing.T) {
				home, cwd := hiddenHome(t, false)
				writeFile(t, filepath.Join(home, ".bashrc"), "orig")
				// Secrets in hidden entries that are now bound read-only
				// stay hidden: the protections' masks lie over the binds.
				writeFile(t, filepath.Join(home, ".ssh/id_rsa"), "KEY")
				doc := execHomeDoc(script, []string{"~"})
				doc["isolation"] = level
				if prot {
					delete(doc, "protections")
				}
				res := execPolicyPath(t, doc, cwd, home)
				if res.Code != 0 || !strings.HasSuffix(res.Stdout, "done") {
					t.Fatalf("the run did not finish: %s", res)
				}
				if prot && res.Stdout != "done" {
					t.Errorf("stdout %q: a protected secret leaked through a read-only hidden entry", res.Stdout)
				}
				if !prot && res.Stdout != "KEYdone" {
					t.Errorf("stdout %q: want the unprotected key read (control)", res.Stdout)
				}
				absent(t, filepath.Join(home, "newdir"), filepath.Join(home, "newfile"), filepath.Join(home, ".newhidden"), filepath.Join(home, "projects2"))
				fileIs(t, filepath.Join(home, ".bashrc"), "orig")
				fileIs(t, filepath.Join(home, "notes.txt"), "notes\nordinary\n")
				fileIs(t, filepath.Join(home, "projects/x"), "made\n")
			})
		}
	}
}
