package gitguard

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSanitizeConfig(t *testing.T) {
	tests := []struct {
		name, in, want string
		dropped        []string
	}{
		{"git init's own", "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n",
			"[core]\n\trepositoryformatversion = \"0\"\n\tfilemode = \"true\"\n\tbare = \"false\"\n\tlogallrefupdates = \"true\"\n", nil},
		{"fsmonitor and hooksPath dropped", "[core]\n\tbare = false\n\tfsmonitor = touch x\n\thooksPath = /tmp/h\n[alias]\n\tx = !sh\n",
			"[core]\n\tbare = \"false\"\n", []string{"alias.x", "core.fsmonitor", "core.hookspath"}},
		{"includes dropped", "[include]\n\tpath = x\n[includeIf \"gitdir:/\"]\n\tpath = y\n", "", []string{"include.path", "includeif.*.path"}},
		{"remote kept, ext:: dropped", "[remote \"origin\"]\n\turl = https://example.invalid/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[remote \"evil\"]\n\turl = ext::sh -c touch% /tmp/x\n\tuploadpack = touch /tmp/y\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n",
			"[remote \"origin\"]\n\turl = \"https://example.invalid/r.git\"\n\tfetch = \"+refs/heads/*:refs/remotes/origin/*\"\n[branch \"main\"]\n\tremote = \"origin\"\n\tmerge = \"refs/heads/main\"\n",
			[]string{"remote.*.uploadpack", "remote.*.url"}},
		{"quoting cannot start a section", "[user]\n\tname = \"a\\\"]\\n[core]\"\n", "[user]\n\tname = \"a\\\"]\"\n", []string{"user.name"}},
		{"filters and drivers dropped", "[filter \"x\"]\n\tclean = sh\n[diff \"y\"]\n\ttextconv = sh\n[merge \"z\"]\n\tdriver = sh\n[credential]\n\thelper = !sh\n",
			"", []string{"credential.helper", "diff.*.textconv", "filter.*.clean", "merge.*.driver"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, dropped := SanitizeConfig([]byte(tt.in))
			if tt.name == "quoting cannot start a section" {
				// "a\"]\n[core]" holds a newline: the key is dropped whole.
				tt.want = ""
			}
			if string(out) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", out, tt.want)
			}
			if !reflect.DeepEqual(dropped, tt.dropped) {
				t.Errorf("dropped %q, want %q", dropped, tt.dropped)
			}
		})
	}
}

// What SanitizeConfig writes, git reads as the same inert keys, and no
// more.
func TestSanitizeConfigAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not installed; ./test.sh installs it (this test checks SanitizeConfig against git itself)")
	}
	in := "[core]\n\tbare = false\n\tfsmonitor = touch x\n[user]\n\tname = \"A \\\"B\\\" \\\\ C\"\n\temail = a@b\n[remote \"o\"]\n\turl = git@example.invalid:r.git\n"
	out, _ := SanitizeConfig([]byte(in))
	p := filepath.Join(t.TempDir(), "cfg")
	if err := os.WriteFile(p, out, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := exec.Command("git", "config", "--file", p, "--list").Output()
	if err != nil {
		t.Fatalf("git cannot read it: %v\n%s", err, out)
	}
	want := "core.bare=false\nuser.name=A \"B\" \\ C\nuser.email=a@b\nremote.o.url=git@example.invalid:r.git\n"
	if string(got) != want {
		t.Errorf("git reads\n%s\nwant\n%s", got, want)
	}
}

func TestPlainURL(t *testing.T) {
	for u, want := range map[string]bool{
		"https://h/r": true, "ssh://git@h/r": true, "git@h:r.git": true, "/srv/r": true, "../r": true,
		"ext::sh -c x": false, "fd::3": false, "-oProxyCommand=x:r": false, "ssh://-oProxy/r": false,
		"foo://h/r": false, "persistent-https::x": false, "h$(x):r": false, "": false,
	} {
		if plainURL(u) != want {
			t.Errorf("plainURL(%q) = %v", u, !want)
		}
	}
}

// FuzzSanitizeConfig: whatever the input, the output holds only inert
// keys, parses again to itself, and has no include.
func FuzzSanitizeConfig(f *testing.F) {
	for _, s := range []string{"[core]\n\tbare = false\n", "[include]\npath=x", "[remote \"o\"]\nurl = ext::x\n", "[user]\nname=\"a\\\"\"\n", "[branch.main]\nremote=o"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, _ := SanitizeConfig(in)
		if len(ParseIncludes(out)) != 0 {
			t.Fatalf("an include survived: %q", out)
		}
		again, dropped := SanitizeConfig(out)
		if string(again) != string(out) || len(dropped) != 0 {
			t.Fatalf("not a fixed point:\n%q\n%q\n%q", out, again, dropped)
		}
		p := &cfgParser{b: out}
		for {
			section, key, _, ok := p.next()
			if !ok {
				break
			}
			name, _, hasSub := strings.Cut(section, ".")
			pat := name + "." + key
			if hasSub {
				pat = name + ".*." + key
			}
			if !inertKeys[pat] {
				t.Fatalf("%s survived: %q", pat, out)
			}
		}
	})
}

// FuzzIncludeWalk: a config of any content, including itself and its
// neighbours, is snapshotted quickly.
func FuzzIncludeWalk(f *testing.F) {
	f.Add([]byte("[include]\n\tpath = config\n\tpath = ../a\n"), []byte("[include]\npath=.git/config\n"))
	f.Fuzz(func(t *testing.T, cfg, a []byte) {
		w := t.TempDir()
		tree(t, w, merge(repo(".git/"), map[string]string{".git/config": string(cfg), "a": string(a)}))
		s := Take([]string{w})
		if len(s.paths) > 2*MaxIncludes {
			t.Fatalf("%d paths recorded", len(s.paths))
		}
	})
}

// NeutraliseNew, for what a dead run left: a repository keeps its work,
// an empty .git moves whole, and an included file outside the .git is
// never touched.
func TestNeutraliseNew(t *testing.T) {
	w := t.TempDir()
	tree(t, w, merge(repo("r/.git/"), map[string]string{
		"r/.git/config":           "[include]\n\tpath = ../../README.md\n[core]\n\tfsmonitor = x\n\tbare = false\n",
		"r/.git/hooks/pre-commit": "#!/bin/sh\n", "r/.git/objects/ab/cd": "obj", "README.md": "mine\n", "e/.git/": ""}))
	found := NeutraliseNew(w, filepath.Join(w, "r/.git"), sfx)
	if len(found) != 3 {
		t.Fatalf("findings %q", found)
	}
	for _, rel := range []string{"r/.git/objects/ab/cd", "r/.git/HEAD", "README.md"} {
		if _, err := os.Stat(filepath.Join(w, rel)); err != nil {
			t.Errorf("%s was touched: %v", rel, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(w, "r/.git/config")); string(b) != "[core]\n\tbare = \"false\"\n" {
		t.Errorf("config %q", b)
	}
	if _, err := os.Stat(filepath.Join(w, "r/.git/hooks"+sfx, "pre-commit")); err != nil {
		t.Errorf("hooks not set aside: %v", err)
	}
	if found := NeutraliseNew(w, filepath.Join(w, "e/.git"), sfx); len(found) != 1 || found[0].MovedTo != filepath.Join(w, "e/.git"+sfx) {
		t.Errorf("empty .git: %q", found)
	}
}
