//go:build linux

package escape_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/policy"
)

// The filesystem patterns of policy documents (issue 14), through the
// path moat exec takes: a document, Document.Exec, moat.New, the command
// in the cwd. These are Heimdall's L1, L3–L11, L14–L17 and B2–B6,
// translated, plus moat's own: a deny-matching file the host creates after
// the start stays unreadable, and a writable pattern never writes through a
// planted link. Each case has a positive control: the same probe with the
// pattern removed (or the guarantee lifted another way) gets through.

// fsLayout is a fixture: paths under "C/" are in the cwd, under "H/" in
// the home, under "P/" in the cwd's parent. A value ending in "/" is a
// directory, one starting with "->" a symbolic link to the rest (with C,
// H and P expanded), anything else a file's content.
type fsLayout map[string]string

// fsRun is one run of a case: its patterns, what the probe prints, and
// what the host must hold afterwards.
type fsRun struct {
	deny, writ []string // with $C, $H, $P expanded
	extra      fsLayout // files added for this run only
	want       string
	check      func(t *testing.T, c, h string)
}

type fsCase struct {
	name    string
	layout  fsLayout
	home    string // "r" or "rw": grant the home (absent: not visible)
	script  string // run by sh in the cwd, with $C, $H, $P expanded
	run     fsRun
	control fsRun
	base    string // where the fixture is made: "" for a fresh t.TempDir()
}

// fsFixture makes the layout in a fresh directory and returns the cwd, the
// home and the parent.
func fsFixture(t *testing.T, l ...fsLayout) (c, h, p string) {
	t.Helper()
	return fsFixtureIn(t, "", l...)
}

// fsFixtureIn is fsFixture in a fresh directory made in dir, or in a
// fresh t.TempDir() when dir is "".
func fsFixtureIn(t *testing.T, dir string, l ...fsLayout) (c, h, p string) {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	} else {
		d, err := os.MkdirTemp(dir, "moat-fsfixture-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		dir = d
	}
	base, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	p = filepath.Join(base, "P")
	c = filepath.Join(p, "cwd")
	h = filepath.Join(base, "home")
	for _, d := range []string{c, h} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exp := func(s string) string { return expandCHP(s, c, h, p) }
	for _, m := range l {
		for k, v := range m {
			path := exp(strings.Replace(strings.Replace(strings.Replace(k, "C/", "$C/", 1), "H/", "$H/", 1), "P/", "$P/", 1))
			switch {
			case strings.HasPrefix(v, "->"):
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(exp(v[2:]), path); err != nil {
					t.Fatal(err)
				}
			case strings.HasSuffix(k, "/"):
				if err := os.MkdirAll(path, 0o755); err != nil {
					t.Fatal(err)
				}
			default:
				writeFile(t, path, v)
			}
		}
	}
	return c, h, p
}

func expandCHP(s, c, h, p string) string {
	return strings.NewReplacer("$C", c, "$H", h, "$P", p).Replace(s)
}

// execPolicy runs a policy document as moat exec does and returns what
// the command printed. start, when set, runs on the host after the
// command started.
func execPolicy(t *testing.T, doc map[string]any, cwd, home string, start func()) result {
	t.Helper()
	return execPolicyStart(t, doc, cwd, []string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin"}, start)
}

// execPolicyEnv is execPolicy with the host environment environ.
func execPolicyEnv(t *testing.T, doc map[string]any, cwd string, environ []string) result {
	t.Helper()
	return execPolicyStart(t, doc, cwd, environ, nil)
}

func execPolicyStart(t *testing.T, doc map[string]any, cwd string, environ []string, start func()) result {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	d, err := policy.ParseDocument(b)
	if err != nil {
		return result{Code: 2, Err: err, Stderr: "moat: " + err.Error()} // as moat exec exits: the command adds the prefix
	}
	x, err := d.Exec(policy.ExecHost{Environ: environ, Dir: cwd})
	if err != nil {
		return result{Code: 2, Err: err, Stderr: "moat: " + err.Error()}
	}
	defer x.Close()
	sb, err := moat.New(x.Config)
	if err != nil {
		return result{Code: 2, Err: err, Stderr: "moat: " + err.Error()}
	}
	defer sb.Close()
	c := sb.Command(x.Command[0], x.Command[1:]...)
	c.Dir = x.Dir
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Start(); err != nil {
		return toResult("", err.Error(), err)
	}
	if start != nil {
		start()
	}
	err = c.Wait()
	return toResult(out.String(), errb.String(), err)
}

func (fc fsCase) exec(t *testing.T, r fsRun, start func(c, h string)) {
	t.Helper()
	c, h, p := fsFixtureIn(t, fc.base, fc.layout, r.extra)
	exp := func(ss []string) []string {
		out := []string{}
		for _, s := range ss {
			out = append(out, expandCHP(s, c, h, p))
		}
		return out
	}
	doc := map[string]any{
		"command":    []string{"/bin/sh", "-c", expandCHP(fc.script, c, h, p)},
		"cwd":        c,
		"filesystem": map[string]any{"deny": exp(r.deny), "writable": exp(r.writ)},
	}
	if fc.home != "" {
		doc["grants"] = map[string]string{h: fc.home}
	}
	var st func()
	if start != nil {
		st = func() { start(c, h) }
	}
	res := execPolicy(t, doc, c, h, st)
	if res.Code != 0 || res.Stdout != r.want {
		t.Errorf("stdout %q, want %q; %s", res.Stdout, r.want, res)
	}
	if r.check != nil {
		r.check(t, c, h)
	}
}

func fileIs(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != want {
		t.Errorf("%s on the host: %q, %v; want %q", path, b, err, want)
	}
}

func absent(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s exists on the host; want it absent", p)
		}
	}
}

func present(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: %v; want it on the host", p, err)
		}
	}
}

// TestPolicyFilesystem runs each case with its patterns, then its positive
// control.
func TestPolicyFilesystem(t *testing.T) {
	protected := []string{".heimdall-deny", ".heimdall-write", ".heimdall-local", ".moat-deny", ".moat-write", ".moat-local"}
	protectedDirs := []string{".git", ".agents", ".pi"}
	var l11 strings.Builder
	l11.WriteString(`echo edited > regular.txt; `)
	for _, n := range protected {
		l11.WriteString(`touch ` + n + ` 2>/dev/null && printf '` + n + `-made:' || printf '` + n + `-blocked:'; `)
	}
	for _, n := range protectedDirs {
		l11.WriteString(`mkdir ` + n + ` 2>/dev/null && printf '` + n + `-made:' || printf '` + n + `-blocked:'; `)
	}
	l11want := func(verb string) string {
		var b strings.Builder
		for _, n := range append(append([]string{}, protected...), protectedDirs...) {
			b.WriteString(n + "-" + verb + ":")
		}
		return b.String()
	}
	// moat exec blocks each missing control path up front (issue 23): a
	// marked placeholder, masked, stands there for the run and is removed
	// at Close, and the cwd's top stays writable (regular.txt is new), so
	// none is there afterwards. .git's placeholder is a file, which go
	// build and git pass over (TestExecBuildModeRunsWhatItBuilds). The control (an absolute writable
	// ancestor: nothing protected) makes them all and keeps them but
	// .git, which moat's git guard moves aside in any writable place.
	l11check := func(made bool) func(t *testing.T, c, h string) {
		return func(t *testing.T, c, h string) {
			fileIs(t, filepath.Join(c, "regular.txt"), "edited\n")
			for _, n := range append(append([]string{}, protected...), protectedDirs...) {
				if made && n != ".git" {
					present(t, filepath.Join(c, n))
				} else if !made {
					absent(t, filepath.Join(c, n))
				}
			}
		}
	}
	cases := []fsCase{
		{
			name:    "L1 a missing deny runs isolated",
			script:  `printf isolated`,
			run:     fsRun{deny: []string{"missing"}, want: "isolated"},
			control: fsRun{want: "isolated"},
		},
		{
			name:    "L3 unmatched project files stay read-only",
			layout:  fsLayout{"C/data.txt": "old"},
			script:  `echo new > data.txt 2>/dev/null && printf written || printf refused`,
			run:     fsRun{want: "refused", check: func(t *testing.T, c, h string) { fileIs(t, filepath.Join(c, "data.txt"), "old") }},
			control: fsRun{writ: []string{"data.txt"}, want: "written", check: func(t *testing.T, c, h string) { fileIs(t, filepath.Join(c, "data.txt"), "new\n") }},
		},
		{
			name:    "L4 writable patterns allow edits and creation",
			layout:  fsLayout{"C/work/": ""},
			script:  `echo edited > work/new.txt 2>/dev/null && printf ok || printf refused`,
			run:     fsRun{writ: []string{"work"}, want: "ok", check: func(t *testing.T, c, h string) { fileIs(t, filepath.Join(c, "work/new.txt"), "edited\n") }},
			control: fsRun{want: "refused", check: func(t *testing.T, c, h string) { absent(t, filepath.Join(c, "work/new.txt")) }},
		},
		{
			name: "L5 a missing deny under a writable directory cannot be created",
			// allowed.txt is new: the guard (a masked placeholder) refuses
			// one name, and the directory holding it stays writable.
			layout: fsLayout{"C/work/": ""},
			script: `echo a > work/allowed.txt; mkdir work/blocked 2>/dev/null && printf mkdir-made: || printf mkdir-blocked:; ` +
				`echo x > work/blocked/f 2>/dev/null && printf write-made || printf write-blocked`,
			run: fsRun{writ: []string{"work"}, deny: []string{"work/blocked"}, want: "mkdir-blocked:write-blocked", check: func(t *testing.T, c, h string) {
				fileIs(t, filepath.Join(c, "work/allowed.txt"), "a\n")
				absent(t, filepath.Join(c, "work/blocked"))
			}},
			control: fsRun{writ: []string{"work"}, want: "mkdir-made:write-made", check: func(t *testing.T, c, h string) {
				fileIs(t, filepath.Join(c, "work/allowed.txt"), "a\n")
				present(t, filepath.Join(c, "work/blocked/f"))
			}},
		},
		{
			name:    "L6 a missing home deny cannot be created in a writable home",
			home:    "r",
			script:  `mkdir $H/.vim 2>/dev/null && printf mkdir-made || printf mkdir-blocked`,
			run:     fsRun{writ: []string{"~"}, deny: []string{"~/.vim"}, want: "mkdir-blocked", check: func(t *testing.T, c, h string) { absent(t, filepath.Join(h, ".vim")) }},
			control: fsRun{writ: []string{"~"}, want: "mkdir-made"},
		},
		{
			name:    "L7 a denied home link to a directory denies what it points at",
			layout:  fsLayout{"H/real-vim/init.vim": "vimrc", "H/.vim": "->$H/real-vim"},
			home:    "r",
			script:  `cat $H/.vim/init.vim 2>/dev/null || printf denied:; cat $H/real-vim/init.vim 2>/dev/null || printf denied`,
			run:     fsRun{deny: []string{"~/.vim"}, want: "denied:denied", check: func(t *testing.T, c, h string) { fileIs(t, filepath.Join(h, "real-vim/init.vim"), "vimrc") }},
			control: fsRun{want: "vimrcvimrc"},
		},
		{
			name:    "L8 existing and missing home denies together",
			layout:  fsLayout{"H/.ssh/id_rsa": "KEY"},
			home:    "r",
			script:  `cat $H/.ssh/id_rsa 2>/dev/null || printf ssh-denied; printf :; mkdir $H/.vim 2>/dev/null && printf vim-made || printf vim-blocked`,
			run:     fsRun{writ: []string{"~"}, deny: []string{"~/.ssh", "~/.vim"}, want: "ssh-denied:vim-blocked", check: func(t *testing.T, c, h string) { absent(t, filepath.Join(h, ".vim")) }},
			control: fsRun{writ: []string{"~"}, want: "KEY:vim-made"},
		},
		{
			name:   "L9 missing concrete paths do not block the start",
			layout: fsLayout{"H/.config/secret": "SECRET"},
			home:   "r",
			script: `printf started:; test -e $H/missing-writable || printf missing-writable-skipped:; ` +
				`test -e $H/.config/missing-restored || printf missing-restored-skipped:; cat $H/.config/secret 2>/dev/null || printf secret-denied`,
			run: fsRun{deny: []string{"~/.config", "!~/.config/missing-restored"}, writ: []string{"~/missing-writable"},
				want: "started:missing-writable-skipped:missing-restored-skipped:secret-denied",
				check: func(t *testing.T, c, h string) {
					absent(t, filepath.Join(h, "missing-writable"), filepath.Join(h, ".config/missing-restored"))
				}},
			control: fsRun{writ: []string{"~/missing-writable"}, want: "started:missing-writable-skipped:missing-restored-skipped:SECRET"},
		},
		{
			name:   "L10 a denied parent allows a more specific writable child",
			layout: fsLayout{"C/.config/nvim/init.vim": "old", "C/.config/secret": "SECRET"},
			script: `echo edited > .config/nvim/init.vim 2>/dev/null || printf nvim-refused:; touch .config/other 2>/dev/null && printf other-made: || printf blocked:; ` +
				`cat .config/secret 2>/dev/null || printf secret-denied`,
			run: fsRun{deny: []string{".config"}, writ: []string{".config/nvim"}, want: "blocked:secret-denied", check: func(t *testing.T, c, h string) {
				fileIs(t, filepath.Join(c, ".config/nvim/init.vim"), "edited\n")
				absent(t, filepath.Join(c, ".config/other"))
			}},
			control: fsRun{writ: []string{".config"}, want: "other-made:SECRET"},
		},
		{
			name:    "L11 a broad writable cwd protects the control paths",
			script:  l11.String(),
			run:     fsRun{writ: []string{"."}, want: l11want("blocked"), check: l11check(false)},
			control: fsRun{writ: []string{"$P"}, want: l11want("made"), check: l11check(true)}, // an absolute writable ancestor: nothing protected
		},
		{
			name:    "L11 ** is broad too",
			script:  l11.String(),
			run:     fsRun{writ: []string{"**"}, want: l11want("blocked"), check: l11check(false)},
			control: fsRun{writ: []string{"$P"}, want: l11want("made"), check: l11check(true)},
		},
		{
			name:    "L14 deny masks env files and supports negation",
			layout:  fsLayout{"C/.env": "secret", "C/.env.example": "example", "C/sub/.env.local": "deep"},
			script:  `cat .env 2>/dev/null; cat sub/.env.local 2>/dev/null; printf :; cat .env.example`,
			run:     fsRun{deny: []string{".env*", "!.env.example"}, want: ":example"},
			control: fsRun{want: "secretdeep:example"},
		},
		{
			name:    "M9 a nested env pattern matches cwd-relative paths",
			layout:  fsLayout{"C/.env": "secret", "C/.env.example": "example", "C/packages/api/.env.local": "deep"},
			script:  `cat .env 2>/dev/null; cat packages/api/.env.local 2>/dev/null; printf :; cat .env.example`,
			run:     fsRun{deny: []string{"**/.env*", "!.env.example"}, want: ":example"},
			control: fsRun{want: "secretdeep:example"},
		},
		{
			name:    "L15 heimdall fragments come after the JSON patterns",
			layout:  fsLayout{"C/secret.txt": "secret", "C/write.txt": "old", "C/.heimdall-deny": "!secret.txt\n", "C/.heimdall-write": "write.txt\n"},
			script:  `cat secret.txt 2>/dev/null || printf denied; echo new > write.txt 2>/dev/null || printf :refused`,
			run:     fsRun{deny: []string{"secret.txt"}, want: "secret", check: func(t *testing.T, c, h string) { fileIs(t, filepath.Join(c, "write.txt"), "new\n") }},
			control: fsRun{deny: []string{"secret.txt"}, extra: fsLayout{"C/.heimdall-deny": "# none\n", "C/.heimdall-write": "# none\n"}, want: "denied:refused"},
		},
		{
			name:    "L15 moat fragments come after the JSON patterns",
			layout:  fsLayout{"C/secret.txt": "secret", "C/write.txt": "old", "C/.moat-deny": "!secret.txt\n", "C/.moat-write": "write.txt\n"},
			script:  `cat secret.txt 2>/dev/null || printf denied; echo new > write.txt 2>/dev/null || printf :refused`,
			run:     fsRun{deny: []string{"secret.txt"}, want: "secret", check: func(t *testing.T, c, h string) { fileIs(t, filepath.Join(c, "write.txt"), "new\n") }},
			control: fsRun{deny: []string{"secret.txt"}, extra: fsLayout{"C/.moat-deny": "# none\n", "C/.moat-write": "# none\n"}, want: "denied:refused"},
		},
		{
			name:    "L16 .pi/heimdall.json is not read",
			layout:  fsLayout{"C/secret.txt": "secret", "C/.pi/heimdall.json": `{"filesystem":{"deny":["secret.txt"]}}`},
			script:  `cat secret.txt 2>/dev/null || printf denied`,
			run:     fsRun{want: "secret"},
			control: fsRun{deny: []string{"secret.txt"}, want: "denied"},
		},
		{
			name:    "L17 fragments of a parent directory are not read",
			layout:  fsLayout{"C/secret.txt": "secret", "P/.heimdall-deny": "secret.txt\n", "P/.moat-deny": "secret.txt\n"},
			script:  `cat secret.txt 2>/dev/null || printf denied`,
			run:     fsRun{want: "secret"},
			control: fsRun{extra: fsLayout{"C/.moat-deny": "secret.txt\n"}, want: "denied"},
		},
		{
			name:    "B2 a denied parent with a redundant denied child",
			layout:  fsLayout{"H/.config/nvim/init.vim": "vimrc"},
			home:    "r",
			script:  `cat $H/.config/nvim/init.vim 2>/dev/null || printf denied`,
			run:     fsRun{deny: []string{"~/.config", "~/.config/nvim"}, want: "denied"},
			control: fsRun{want: "vimrc"},
		},
		{
			name:   "B3 a negated denied directory is restored read-only",
			layout: fsLayout{"H/.config/nvim/init.vim": "vimrc", "H/.config/not-denied/f": "f", "H/.config/other": "other"},
			home:   "rw",
			script: `ls $H/.config/not-denied >/dev/null && printf dir-visible:; touch $H/.config/not-denied/new 2>/dev/null && printf writable: || printf readonly:; ` +
				`cat $H/.config/nvim/init.vim 2>/dev/null || printf nvim-denied:; cat $H/.config/other 2>/dev/null || printf other-denied`,
			run: fsRun{deny: []string{"~/.config", "~/.config/nvim", "!~/.config/not-denied"}, want: "dir-visible:readonly:nvim-denied:other-denied",
				check: func(t *testing.T, c, h string) { absent(t, filepath.Join(h, ".config/not-denied/new")) }},
			control: fsRun{writ: []string{"~/.config"}, want: "dir-visible:writable:vimrcother"},
		},
		{
			name:   "B4 a negated denied file is restored read-only",
			layout: fsLayout{"H/.config/not-denied.txt": "visible", "H/.config/other": "other"},
			home:   "rw",
			script: `cat $H/.config/not-denied.txt >/dev/null && printf file-visible:; echo x >> $H/.config/not-denied.txt 2>/dev/null && printf writable: || printf readonly:; ` +
				`cat $H/.config/other 2>/dev/null || printf other-denied`,
			run: fsRun{deny: []string{"~/.config", "!~/.config/not-denied.txt"}, want: "file-visible:readonly:other-denied",
				check: func(t *testing.T, c, h string) { fileIs(t, filepath.Join(h, ".config/not-denied.txt"), "visible") }},
			control: fsRun{writ: []string{"~/.config"}, want: "file-visible:writable:other"},
		},
		{
			name:   "B5 a nested negated denied file restores only that file",
			layout: fsLayout{"H/.config/foo/bar.json": "{}", "H/.config/foo/secret": "SECRET"},
			home:   "r",
			script: `cat $H/.config/foo/bar.json >/dev/null && printf nested-visible:; cat $H/.config/foo/secret 2>/dev/null || printf secret-denied:; ` +
				`echo x >> $H/.config/foo/bar.json 2>/dev/null || printf readonly`,
			run:     fsRun{deny: []string{"~/.config", "!~/.config/foo/bar.json"}, want: "nested-visible:secret-denied:readonly"},
			control: fsRun{want: "nested-visible:SECRETreadonly"},
		},
		{
			name:   "B6 a writable child under a denied parent",
			layout: fsLayout{"H/.config/not-denied/": "", "H/.config/other": "other"},
			home:   "r",
			script: `echo x > $H/.config/not-denied/f 2>/dev/null || printf write-refused; cat $H/.config/other 2>/dev/null || printf :other-denied`,
			run: fsRun{deny: []string{"~/.config"}, writ: []string{"~/.config/not-denied"}, want: ":other-denied",
				check: func(t *testing.T, c, h string) { fileIs(t, filepath.Join(h, ".config/not-denied/f"), "x\n") }},
			control: fsRun{want: "write-refusedother"},
		},
		{
			name:    "a writable pattern never writes through a planted link",
			layout:  fsLayout{"H/target/": "", "C/out": "->$H/target"},
			home:    "r",
			script:  `echo pwned > out/f 2>/dev/null && printf written || printf refused`,
			run:     fsRun{writ: []string{"out"}, want: "refused", check: func(t *testing.T, c, h string) { absent(t, filepath.Join(h, "target/f")) }},
			control: fsRun{writ: []string{"$H/target"}, want: "written"},
		},
		{
			name:    "a glob deny of a path beats a literal writable ancestor",
			layout:  fsLayout{"C/work/.env": "secret"},
			script:  `cat work/.env 2>/dev/null || printf denied; echo x > work/.env 2>/dev/null && printf :written || printf :refused`,
			run:     fsRun{deny: []string{".env"}, writ: []string{"work"}, want: "denied:refused", check: func(t *testing.T, c, h string) { fileIs(t, filepath.Join(c, "work/.env"), "secret") }},
			control: fsRun{writ: []string{"work"}, want: "secret:written"},
		},
	}
	for _, fc := range cases {
		t.Run(fc.name, func(t *testing.T) {
			t.Run("policy", func(t *testing.T) { fc.exec(t, fc.run, nil) })
			t.Run("control", func(t *testing.T) { fc.exec(t, fc.control, nil) })
		})
	}
}

// TestPolicyDenyCreatedAfterStart: a file matching a deny pattern that the
// host creates after the sandbox started is unreadable too (Heimdall reads
// it), in the cwd and in a subdirectory. The control runs without the
// pattern and reads both. Where the cwd lies under the host's /tmp, which
// the sandbox's own private /tmp is laid over, the private /tmp's
// writability wins (Landlock's rule on /tmp reaches every path beneath
// it): a file the host creates there later is readable, as the Report's
// gap says; existing denied files stay masked (TestPolicyFilesystem).
func TestPolicyDenyCreatedAfterStart(t *testing.T) {
	script := `i=0; while [ ! -e sub/.env.late ] || [ ! -e .env.late ]; do i=$((i+1)); [ $i -gt 200 ] && break; sleep 0.05; done; ` +
		`cat .env.late 2>/dev/null || printf top-denied; printf :; cat sub/.env.late 2>/dev/null || printf sub-denied; printf :; cat sub/plain.txt`
	late := func(c, h string) {
		time.Sleep(200 * time.Millisecond)
		writeFile(t, filepath.Join(c, "sub/.env.late"), "LATE-SUB")
		writeFile(t, filepath.Join(c, ".env.late"), "LATE-TOP")
	}
	cases := []struct {
		name, base, want string
		deny             []string
	}{
		{"policy, cwd outside the temp directories", home(t), "top-denied:sub-denied:plain", []string{"**/.env*"}},
		{"control, cwd outside the temp directories", home(t), "LATE-TOP:LATE-SUB:plain", nil},
		{"policy, cwd under /tmp: the private /tmp stays writable", "/tmp", "LATE-TOP:LATE-SUB:plain", []string{"**/.env*"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fc := fsCase{layout: fsLayout{"C/sub/plain.txt": "plain"}, script: script + "; touch /tmp/x && printf :tmp-ok", base: tc.base}
			fc.exec(t, fsRun{deny: tc.deny, want: tc.want + ":tmp-ok"}, late)
		})
	}
}

// TestPolicyFilesystemErrors: invalid patterns and fragments stop the run
// before anything starts, with the message that names them.
func TestPolicyFilesystemErrors(t *testing.T) {
	cases := []struct {
		name   string
		layout fsLayout
		deny   []string
		want   string
	}{
		{"invalid pattern", nil, []string{"./x", "a["}, `invalid filesystem pattern "a[": unterminated character class [`},
		{"a fragment that is a directory", fsLayout{"C/.heimdall-deny/": ""}, []string{"./x"}, "moat: invalid filesystem fragment "},
		{"a glob outside the cwd", nil, []string{"./x", "/etc/*.conf"}, "must be a literal path"},
		{"the control: a valid policy runs", nil, []string{"./x"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, h, _ := fsFixture(t, tc.layout, fsLayout{"C/out/": ""})
			r := execPolicy(t, map[string]any{"command": []string{"/bin/sh", "-c", "touch out/ran"}, "filesystem": map[string]any{"deny": tc.deny, "writable": []string{"out"}}}, c, h, nil)
			if tc.want == "" {
				if r.Code != 0 {
					t.Fatalf("control: %s", r)
				}
				present(t, filepath.Join(c, "out/ran"))
				return
			}
			if r.Code != 2 || !strings.Contains(r.Stderr, tc.want) {
				t.Errorf("want exit 2 with %q; %s", tc.want, r)
			}
			absent(t, filepath.Join(c, "out/ran"))
		})
	}
}
