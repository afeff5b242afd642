package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPythonInvocation(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "s.py")
	os.WriteFile(script, []byte("print(1)\n"), 0o644)
	realScript, _ := filepath.EvalSymlinks(script)
	for _, tc := range []struct {
		name string
		code string
		args []string
		tty  bool
		want pythonInvocation
		err  string
	}{
		{name: "-c with arguments", code: "print(1)", args: []string{"a", "-x"}, want: pythonInvocation{args: []string{"-c", "print(1)", "a", "-x"}}},
		{name: "nothing on a terminal", tty: true, want: pythonInvocation{repl: true}},
		{name: "nothing from a pipe", want: pythonInvocation{args: []string{"-"}}},
		{name: "- with arguments", args: []string{"-", "a"}, want: pythonInvocation{args: []string{"-", "a"}}},
		{name: "a script", args: []string{script, "--flag"}, want: pythonInvocation{args: []string{realScript, "--flag"}, script: realScript}},
		{name: "a missing script", args: []string{filepath.Join(dir, "nope.py")}, err: "no such file"},
		{name: "a directory", args: []string{dir}, err: "not a regular file"},
		{name: "an interpreter option", args: []string{"-m", "http.server"}, err: "put moat's flags before the script"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &pythonFlags{code: tc.code}
			got, err := p.invocation(tc.args, tc.tty)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want %q", err, tc.err)
				}
				if code, _ := exitCode(err); code != 2 {
					t.Fatalf("exit code %d, want 2", code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.args, tc.want.args) || got.script != tc.want.script || got.repl != tc.want.repl {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestPythonFlagsLayer(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    pythonFlags
		err  string
	}{
		{"a package read as an option", pythonFlags{packages: []string{"--index-url=http://evil"}}, "--package"},
		{"find-links read as an option", pythonFlags{findLinks: []string{"-x"}}, "--find-links"},
		{"an interpreter read as an option", pythonFlags{interpreter: "-c"}, "--python"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.p.layer()
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("got %v, want %q", err, tc.err)
			}
		})
	}
	l, err := (&pythonFlags{venv: "v", findLinks: []string{"w", "https://x/links"}, packages: []string{" numpy "}}).layer()
	if err != nil || !filepath.IsAbs(l.Venv) || !filepath.IsAbs(l.FindLinks[0]) || l.FindLinks[1] != "https://x/links" || l.Packages[0] != "numpy" {
		t.Fatalf("layer %+v %v", l, err)
	}
}

// The flags of moat python parse as documented: -p repeats, the switches
// take an optional =BOOL, and flags stop at the script.
func TestPythonCommandFlags(t *testing.T) {
	c := newPythonCmd(stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr})
	if err := c.ParseFlags([]string{"-p", "a", "--package", "b", "--system-site-packages=false", "--no-index", "--find-links", "w", "--allow-pip-install", "--venv-backend", "uv", "--workdir", ".", "script.py", "-p", "x"}); err != nil {
		t.Fatal(err)
	}
	if got := c.Flags().Args(); !slices.Equal(got, []string{"script.py", "-p", "x"}) {
		t.Fatalf("the script's arguments: %q", got)
	}
	pkgs, _ := c.Flags().GetStringArray("package")
	if !slices.Equal(pkgs, []string{"a", "b"}) {
		t.Fatalf("packages %q", pkgs)
	}
	for flag, want := range map[string]string{"system-site-packages": "false", "no-index": "true", "allow-pip-install": "true", "venv-backend": "uv"} {
		if got := c.Flags().Lookup(flag).Value.String(); got != want {
			t.Fatalf("--%s = %q, want %q", flag, got, want)
		}
	}
	if err := newPythonCmd(stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}).ParseFlags([]string{"--venv-backend", "conda"}); err == nil {
		t.Fatal("--venv-backend conda accepted")
	}
}
