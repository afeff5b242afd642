//go:build linux

package escape_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// moatCLIState runs moat's command line with args in dir, with its own
// state directory (XDG_STATE_HOME) under state.
func moatCLIState(t *testing.T, dir, state string, args ...string) result {
	t.Helper()
	return moatCLI(t, dir, []string{"XDG_STATE_HOME=" + state}, args...)
}

// hostInputCase is one hostile rewrite of a host input: the file a
// sandbox writes, the command line that reads it next, and the evidence
// that the file took effect.
type hostInputCase struct {
	name string
	file string // the host input's name in the project
	// content is what the sandbox writes, given the test's directory.
	content func(d hostInputDirs) string
	// next is the command line that reads the file, run in cwd (the
	// project, or a subdirectory for a fragment).
	next func(d hostInputDirs) []string
	cwd  func(d hostInputDirs) string
	// took reports whether the rewritten file took effect.
	took func(d hostInputDirs) bool
	// also are other files the sandbox wrote that the control pins too.
	also []string
}

// hostInputDirs are one case's directories: proj is the project (the
// sandbox's working directory in the first run), secret holds a key no
// sandbox is granted, root is private to the test.
type hostInputDirs struct{ root, proj, secret, state string }

func hostInputCases() []hostInputCase {
	runNext := func(config string) func(d hostInputDirs) []string {
		return func(d hostInputDirs) []string {
			return []string{"run", "--config", config, "--workdir", ".", "--", "sh", "-c", "echo ran > ran; cat " + d.secret + "/key > leak 2>/dev/null; true"}
		}
	}
	// ran: the command wrote its mark, in the project or (the controls'
	// working directory) its sub.
	ran := func(d hostInputDirs, name string) string {
		for _, p := range []string{filepath.Join(d.proj, name), filepath.Join(d.proj, "sub", name)} {
			if b, err := os.ReadFile(p); err == nil {
				return string(b)
			}
		}
		return ""
	}
	inProj := func(d hostInputDirs) string { return d.proj }
	// The configs are named ci.toml: a moat.toml the run writes at the top
	// of its working directory is a control file, set aside by Close
	// (TestCloseScanControlFiles), so it never reaches the next run.
	return []hostInputCase{{
		name: "config grants a secret directory",
		file: "ci.toml",
		content: func(d hostInputDirs) string {
			return "[grants]\n\"" + d.secret + "\" = \"r\"\n"
		},
		next: runNext("ci.toml"), cwd: inProj,
		took: func(d hostInputDirs) bool { return strings.Contains(ran(d, "leak"), "SECRET") },
	}, {
		name: "config turns protections off",
		file: "ci.toml",
		content: func(hostInputDirs) string {
			return "[security]\nprotect-credentials = false\nprotect-cloud-config = false\n"
		},
		next: runNext("ci.toml"), cwd: inProj,
		took: func(d hostInputDirs) bool { return ran(d, "ran") != "" },
	}, {
		name: "config names a sandbox-written interpreter",
		file: "ci.toml",
		content: func(d hostInputDirs) string {
			return "[python]\ninterpreter = \"" + d.proj + "/evil.sh\"\n"
		},
		next: runNext("ci.toml"), cwd: inProj,
		took: func(d hostInputDirs) bool { return exists(filepath.Join(d.root, "pwned")) },
		also: []string{"evil.sh"},
	}, {
		name: "exec policy document",
		file: "policy.json",
		content: func(hostInputDirs) string {
			return `{"command": ["sh", "-c", "echo ran > ran"], "filesystem": {"writable": ["./"]}}`
		},
		next: func(hostInputDirs) []string { return []string{"exec", "--policy", "policy.json"} },
		cwd:  inProj,
		took: func(d hostInputDirs) bool { return exists(filepath.Join(d.proj, "ran")) },
	}, {
		name: "fragment in a subdirectory",
		file: "sub/.moat-write",
		content: func(hostInputDirs) string {
			return "*\n"
		},
		next: func(hostInputDirs) []string { return []string{"exec", "--", "sh", "-c", "echo ran > ran"} },
		cwd:  func(d hostInputDirs) string { return filepath.Join(d.proj, "sub") },
		took: func(d hostInputDirs) bool { return exists(filepath.Join(d.proj, "sub", "ran")) },
	}}
}

// newHostInputDirs makes one case's directories.
func newHostInputDirs(t *testing.T) hostInputDirs {
	t.Helper()
	root := t.TempDir()
	d := hostInputDirs{root: root, proj: filepath.Join(root, "proj"), secret: filepath.Join(root, "secret"), state: filepath.Join(root, "state")}
	for _, p := range []string{d.proj, filepath.Join(d.proj, "sub"), d.secret, d.state} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(d.secret, "key"), []byte("SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return d
}

// plantScript is the sandbox's first run: it writes the host input (and
// the interpreter a config may name) into its working directory.
func hostInputPlantScript(c hostInputCase, d hostInputDirs) string {
	return `printf '%s' "$CONTENT" > ` + c.file + `; printf '#!/bin/sh\necho pwned > ` + d.root + `/pwned\nexit 1\n' > evil.sh; chmod +x evil.sh 2>/dev/null; true`
}

// TestHostInputRewrittenBySandbox: a sandbox run whose working directory
// is the project rewrites a config, a policy document or a fragment
// there; the next command line that reads it is refused with exit 2, one
// line that names the file and moat trust, and no side effect (the
// command does not run, no interpreter runs on the host). It is refused
// also when the next run's own places do not hold it (the journal of
// earlier runs). Controls: the same content written by the user where no
// sandbox ever wrote takes effect, and so does the sandbox's content once
// the user pins it with moat trust.
func TestHostInputRewrittenBySandbox(t *testing.T) {
	for _, c := range hostInputCases() {
		t.Run(c.name, func(t *testing.T) {
			d := newHostInputDirs(t)
			plant := moatCLIState(t, d.proj, d.state, "run", "--workdir", ".", "--env", "CONTENT="+c.content(d), "--", "sh", "-c", hostInputPlantScript(c, d))
			if plant.Code != 0 {
				t.Fatalf("the sandbox's run failed: %v", plant)
			}
			if b, err := os.ReadFile(filepath.Join(d.proj, c.file)); err != nil || string(b) != c.content(d) {
				t.Fatalf("the sandbox did not write %s (%v): the attack is not set up", c.file, err)
			}
			next := moatCLIState(t, c.cwd(d), d.state, c.next(d)...)
			if next.Code != 2 {
				t.Fatalf("the next command line was not refused with exit 2: %v", next)
			}
			line := strings.TrimSpace(next.Stderr)
			if strings.Count(next.Stderr, "\n") != 1 || !strings.HasPrefix(line, "moat: ") || !strings.Contains(line, filepath.Base(c.file)) || !strings.Contains(line, "moat trust") {
				t.Fatalf("want one moat line naming %s and moat trust, got %q", c.file, next.Stderr)
			}
			if c.took(d) || exists(filepath.Join(d.root, "pwned")) {
				t.Fatalf("refused, yet the rewritten %s took effect: %v", c.file, next)
			}

			// Positive control 1: pinned by the user, the sandbox's
			// content is read and takes effect.
			if r := moatCLIState(t, d.proj, d.state, append([]string{"trust", c.file}, c.also...)...); r.Code != 0 {
				t.Fatalf("moat trust: %v", r)
			}
			moatCLIState(t, c.cwd(d), d.state, c.next(d)...)
			if !c.took(d) {
				t.Fatalf("trusted, the file did not take effect: the probe cannot tell")
			}

			// Positive control 2: the same content written by the user in
			// a project no sandbox ever wrote takes effect unpinned.
			// A config or policy in the run's own writable place is
			// refused however it was written (TestHostInputCurrentRun),
			// so here the run writes only sub, or the policy lies
			// outside the cwd.
			u := newHostInputDirs(t)
			file := filepath.Join(u.proj, c.file)
			args := c.next(u)
			switch args[0] {
			case "run":
				args[4] = "sub"
			case "exec":
				if args[1] == "--policy" {
					file = filepath.Join(u.root, c.file)
					args[2] = file
				}
			}
			if err := os.WriteFile(file, []byte(c.content(u)), 0o600); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(u.proj, "evil.sh"), []byte("#!/bin/sh\necho pwned > "+u.root+"/pwned\nexit 1\n"), 0o700)
			r := moatCLIState(t, c.cwd(u), u.state, args...)
			if !c.took(u) {
				t.Fatalf("written by the user, the file did not take effect: %v", r)
			}
		})
	}
}

// TestHostInputCurrentRun: a config in a place the run itself can write
// (--workdir ., a writable grant) is refused even when no sandbox has run
// yet, since the run could rewrite it for the next; pinned, it is read.
func TestHostInputCurrentRun(t *testing.T) {
	cases := []struct {
		name string
		args func(d hostInputDirs) []string
	}{
		{"workdir is the config's directory", func(d hostInputDirs) []string {
			return []string{"run", "--config", "moat.toml", "--workdir", ".", "--", "sh", "-c", "echo ran > ran"}
		}},
		{"workdir is a parent, named with ..", func(d hostInputDirs) []string {
			return []string{"run", "--config", "sub/../moat.toml", "--workdir", "..", "--", "sh", "-c", "echo ran > proj/ran"}
		}},
		{"a writable grant holds it", func(d hostInputDirs) []string {
			return []string{"run", "--config", "moat.toml", "--writable", d.proj, "--", "sh", "-c", "echo ran > " + d.proj + "/ran"}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newHostInputDirs(t)
			if err := os.WriteFile(filepath.Join(d.proj, "moat.toml"), []byte("isolation = \"strict\"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			r := moatCLIState(t, d.proj, d.state, c.args(d)...)
			if r.Code != 2 || !strings.Contains(r.Stderr, "moat trust") || exists(filepath.Join(d.proj, "ran")) {
				t.Fatalf("want exit 2 naming moat trust and no run: %v", r)
			}
			if r := moatCLIState(t, d.proj, d.state, "trust", "moat.toml"); r.Code != 0 {
				t.Fatalf("moat trust: %v", r)
			}
			r = moatCLIState(t, d.proj, d.state, c.args(d)...)
			if r.Code != 0 || !exists(filepath.Join(d.proj, "ran")) {
				t.Fatalf("pinned, want the run to go ahead: %v", r)
			}
		})
	}
}

// TestHostInputNamedByConfig: a config the user keeps where no sandbox
// writes names an interpreter, or --find-links names a directory, that a
// sandbox of an earlier run wrote; moat runs the one and installs from
// the other on the host, so each is refused with exit 2 and nothing runs.
// Control: the same files made by the user where no sandbox wrote are
// used (the interpreter runs on the host).
func TestHostInputNamedByConfig(t *testing.T) {
	cases := []struct {
		name    string
		args    func(d hostInputDirs, cfg string) []string
		refusal string
		took    func(d hostInputDirs, r result) bool
	}{
		{"config names an interpreter", func(_ hostInputDirs, cfg string) []string {
			return []string{"run", "--config", cfg, "--", "true"}
		}, "python interpreter", func(d hostInputDirs, _ result) bool { return exists(filepath.Join(d.root, "pwned")) }},
		{"--find-links names a directory", func(d hostInputDirs, _ string) []string {
			return []string{"python", "--find-links", filepath.Join(d.proj, "wheels"), "--no-index", "-p", "mypkg", "-c", "pass"}
		}, "--find-links directory", func(_ hostInputDirs, r result) bool {
			return !strings.Contains(r.Stderr, "--find-links directory")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, sandboxed := range []bool{true, false} {
				d := newHostInputDirs(t)
				script := `mkdir -p wheels; printf '#!/bin/sh\necho pwned > ` + d.root + `/pwned\nexit 1\n' > evil.sh; chmod +x evil.sh`
				if sandboxed {
					if r := moatCLIState(t, d.proj, d.state, "run", "--workdir", ".", "--", "sh", "-c", script); r.Code != 0 {
						t.Fatalf("the sandbox's run failed: %v", r)
					}
				} else {
					os.Mkdir(filepath.Join(d.proj, "wheels"), 0o700)
					os.WriteFile(filepath.Join(d.proj, "evil.sh"), []byte("#!/bin/sh\necho pwned > "+d.root+"/pwned\nexit 1\n"), 0o700)
				}
				safe := filepath.Join(d.root, "safe")
				os.Mkdir(safe, 0o700)
				cfg := filepath.Join(safe, "moat.toml")
				os.WriteFile(cfg, []byte("[python]\ninterpreter = \""+d.proj+"/evil.sh\"\n"), 0o600)
				r := moatCLIState(t, d.root, d.state, c.args(d, cfg)...)
				if sandboxed {
					if r.Code != 2 || !strings.Contains(r.Stderr, c.refusal) || c.took(d, r) {
						t.Fatalf("want exit 2 refusing the %s, and no effect: %v", c.refusal, r)
					}
				} else if !c.took(d, r) {
					t.Fatalf("control: made by the user, the %s was not used: %v", c.refusal, r)
				}
			}
		})
	}
}
