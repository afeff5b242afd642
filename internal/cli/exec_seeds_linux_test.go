package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMoatExecHomeAndTmp is Heimdall's L2 and L12 in moat's terms. L2:
// the home's dotfiles are readable: moat exec gives the command the
// user's home, read-only, at every isolation level, so git reads the
// user's global config; the control denies it. L12:
// the sandbox has a private writable /tmp: mktemp, write and read back
// work, and nothing appears in the host's /tmp.
func TestMoatExecHomeAndTmp(t *testing.T) {
	home := execTempDir(t)
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = L2 Reader\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitName := `git config --global --get user.name || printf unreadable`
	prefix := "moat-l12-" + filepath.Base(home)
	tests := []struct {
		name string
		c    execCase
		want []expect
	}{
		{"L2 the home's git config is readable", execCase{env: []string{"HOME=" + home},
			stdin: `{"command":["sh","-c",` + jsonString(gitName) + `],"isolation":"default"}`, args: []string{"exec", "--policy", "-"}},
			[]expect{exits(0), stdoutIs("L2 Reader\n")}},
		{"L2 the home is the command's at the strict level too", execCase{env: []string{"HOME=" + home},
			stdin: `{"command":["sh","-c",` + jsonString(gitName) + `],"isolation":"strict"}`, args: []string{"exec", "--policy", "-"}},
			[]expect{exits(0), stdoutIs("L2 Reader\n")}},
		{"L2 control: a denied git config is unreadable", execCase{env: []string{"HOME=" + home},
			stdin: `{"command":["sh","-c",` + jsonString(gitName) + `],"filesystem":{"deny":["~/.gitconfig"]}}`, args: []string{"exec", "--policy", "-"}},
			[]expect{exits(0), stdoutIs("unreadable")}},
		{"L12 a private writable /tmp", execCase{args: []string{"exec", "--", "sh", "-c",
			`f=$(mktemp /tmp/` + prefix + `.XXXXXX) && echo ok > "$f" && cat "$f"`}},
			[]expect{exits(0), stdoutIs("ok\n")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkExec(t, tt.c.run(t), tt.want...)
		})
	}
	left, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+".*"))
	if len(left) > 0 {
		for _, f := range left {
			os.Remove(f)
		}
		t.Errorf("the sandbox's /tmp file reached the host's /tmp: %s", strings.Join(left, " "))
	}
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// execHome is a fresh home for moat exec, its own user's: the test's
// $HOME, so that the real one is never touched.
func execHome(t *testing.T) string {
	t.Helper()
	home := execTempDir(t)
	if err := os.MkdirAll(filepath.Join(home, "proj"), 0o755); err != nil {
		t.Fatal(err)
	}
	return home
}

// TestMoatExecHomeSeeds is Heimdall's L6, L8 and L11 through the CLI,
// with the command's home the invoking user's $HOME. L6: a missing
// ~/.vim that the policy denies cannot be made (the home is read-only
// but where writable patterns say); L8: an existing denied ~/.ssh is
// unreadable and a missing denied ~/.vim cannot be made; L11: under
// writable ["."], regular.txt is written and the control names cannot be
// created, and none is on the host afterwards. Each has a control: the
// same probe without the guarantee (a HOME in the writable cwd, nothing
// protected, since nothing can be created at the top of a writable home;
// or an absolute writable ancestor of the cwd, which leaves the control
// names unprotected as in Heimdall) gets through.
func TestMoatExecHomeSeeds(t *testing.T) {
	requireSandbox(t)
	// With the protections off and moat's state outside the home, only
	// the policy keeps the home's top from being written.
	noProt := `"protections":{"protectCredentials":false,"protectShellHistory":false,"protectPackageCredentials":false,"protectCloudConfig":false,"protectBrowserData":false,"protectKeychains":false}`
	l11 := `echo edited > regular.txt; for f in .heimdall-deny .heimdall-write .heimdall-local; do touch $f 2>/dev/null && printf "$f-made:" || printf "$f-blocked:"; done; ` +
		`for d in .git .agents .pi; do mkdir $d 2>/dev/null && printf "$d-made:" || printf "$d-blocked:"; done`
	l11want := func(verb string) string {
		var b strings.Builder
		for _, n := range []string{".heimdall-deny", ".heimdall-write", ".heimdall-local", ".git", ".agents", ".pi"} {
			b.WriteString(n + "-" + verb + ":")
		}
		return b.String()
	}
	tests := []struct {
		name   string
		setup  func(t *testing.T, home string)
		policy func(home string) string
		want   string
		check  func(t *testing.T, home string)
	}{
		{name: "HOME is the invoking user's",
			policy: func(home string) string {
				return `{"command":["sh","-c","printf %s \"$HOME\"; cat ~/notes"]}`
			},
			setup: func(t *testing.T, home string) { writeTestFile(t, filepath.Join(home, "notes"), ":notes") },
			want:  "$HOME:notes"},
		{name: "L6 a missing denied ~/.vim cannot be made",
			policy: func(string) string {
				return `{"command":["sh","-c","mkdir ~/.vim 2>/dev/null && printf mkdir-made || printf mkdir-blocked"],"filesystem":{"deny":["~/.vim"]}}`
			},
			want: "mkdir-blocked", check: func(t *testing.T, home string) { execAbsent(t, filepath.Join(home, ".vim")) }},
		// Nothing can be created at the top of a writable home (it is
		// sealed, and ~/.NAME stays read-only): the controls give the
		// command a HOME in its writable cwd instead.
		{name: "L6 control: HOME in a writable cwd",
			policy: func(home string) string {
				return `{"command":["sh","-c","mkdir ~/.vim 2>/dev/null && printf mkdir-made || printf mkdir-blocked"],"filesystem":{"writable":["."]},"env":{"set":{"HOME":` + jsonString(filepath.Join(home, "proj")) + `}},` + noProt + `}`
			},
			want: "mkdir-made"},
		{name: "L6 a writable home cannot make ~/.vim either",
			policy: func(string) string {
				return `{"command":["sh","-c","mkdir ~/.vim 2>/dev/null && printf mkdir-made || printf mkdir-blocked"],"filesystem":{"writable":["~"]},` + noProt + `}`
			},
			want: "mkdir-blocked", check: func(t *testing.T, home string) { execAbsent(t, filepath.Join(home, ".vim")) }},
		{name: "L8 an existing and a missing home deny",
			setup: func(t *testing.T, home string) { writeTestFile(t, filepath.Join(home, ".ssh/id_rsa"), "KEY") },
			policy: func(string) string {
				return `{"command":["sh","-c","cat ~/.ssh/id_rsa 2>/dev/null || printf ssh-denied; printf :; mkdir ~/.vim 2>/dev/null && printf vim-made || printf vim-blocked"],"filesystem":{"deny":["~/.ssh","~/.vim"]}}`
			},
			want: "ssh-denied:vim-blocked", check: func(t *testing.T, home string) { execAbsent(t, filepath.Join(home, ".vim")) }},
		{name: "L8 control: nothing denied or protected, HOME in a writable cwd",
			setup: func(t *testing.T, home string) { writeTestFile(t, filepath.Join(home, ".ssh/id_rsa"), "KEY") },
			policy: func(home string) string {
				return `{"command":["sh","-c",` + jsonString("cat "+home+"/.ssh/id_rsa 2>/dev/null || printf ssh-denied; printf :; mkdir ~/.vim 2>/dev/null && printf vim-made || printf vim-blocked") +
					`],"filesystem":{"writable":["."]},"env":{"set":{"HOME":` + jsonString(filepath.Join(home, "proj")) + `}},` + noProt + `}`
			},
			want: "KEY:vim-made"},
		{name: "L11 a broad writable cwd cannot create its control names",
			policy: func(string) string {
				return `{"command":["sh","-c",` + jsonString(l11) + `],"filesystem":{"writable":["."]}}`
			},
			want: l11want("blocked"), check: func(t *testing.T, home string) {
				cwd := filepath.Join(home, "proj")
				b, err := os.ReadFile(filepath.Join(cwd, "regular.txt"))
				if err != nil || string(b) != "edited\n" {
					t.Errorf("regular.txt: %q, %v; want it edited", b, err)
				}
				for _, n := range []string{".heimdall-deny", ".heimdall-write", ".heimdall-local", ".git", ".agents", ".pi"} {
					execAbsent(t, filepath.Join(cwd, n))
				}
			}},
		{name: "L11 control: an absolute writable ancestor leaves them unprotected",
			policy: func(home string) string {
				return `{"command":["sh","-c",` + jsonString(l11) + `],"filesystem":{"writable":[` + jsonString(home) + `]}}`
			},
			want: l11want("made")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := execHome(t)
			state := execTempDir(t)
			if err := os.Chmod(state, 0o700); err != nil {
				t.Fatal(err)
			}
			if tt.setup != nil {
				tt.setup(t, home)
			}
			r := execCase{dir: filepath.Join(home, "proj"), env: []string{"HOME=" + home, "XDG_STATE_HOME=" + state},
				stdin: tt.policy(home), args: []string{"exec", "--policy", "-"}}.run(t)
			checkExec(t, r, exits(0), stdoutIs(strings.ReplaceAll(tt.want, "$HOME", home)))
			if tt.check != nil {
				tt.check(t, home)
			}
		})
	}
}

func writeTestFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func execAbsent(t *testing.T, p string) {
	t.Helper()
	if _, err := os.Lstat(p); err == nil {
		t.Errorf("%s exists on the host; want it absent", p)
	}
}
