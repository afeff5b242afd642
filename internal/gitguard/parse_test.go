package gitguard

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var includeCases = []struct {
	name, config string
	want         []string
}{
	{"none", "[core]\n\tbare = false\n", nil},
	{"include", "[include]\n\tpath = a.cfg\n", []string{"a.cfg"}},
	{"key on the header line", "[include] path = x\n", []string{"x"}},
	{"case", "[INCLUDE]\n\tPath = A\n", []string{"A"}},
	{"includeIf", "[includeIf \"gitdir:/a/\"]\n  path = \"y z\" ; c\n", []string{"y z"}},
	{"includeIf without space", "[includeIf\"gitdir:x\"]\npath=q\n", nil},
	{"quoted and escaped", "[include]\npath = \"a\\\"b\\\\c\"\n", []string{"a\"b\\c"}},
	{"continuation", "[include]\npath = ab\\\ncd\n", []string{"abcd"}},
	{"comment after value", "[include]\npath = a # b\n", []string{"a"}},
	{"trailing spaces", "[include]\npath = a b   \n", []string{"a b"}},
	{"several", "[include]\npath = 1\npath = 2\n[core]\npath = no\n[includeif \"onbranch:x\"]\npath = 3\n", []string{"1", "2", "3"}},
	{"legacy subsection", "[include.x]\npath = l\n", []string{"l"}},
	{"no newline at end", "[include]\npath = end", []string{"end"}},
	{"crlf", "[include]\r\npath = w\r\n", []string{"w"}},
	{"other sections", "[alias]\npath = x\n[remote \"o\"]\nurl = y\n", nil},
	{"tab in quotes", "[include]\npath = \"a\tb\"\n", []string{"a\tb"}},
}

func TestParseIncludes(t *testing.T) {
	for _, tt := range includeCases {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseIncludes([]byte(tt.config)); !slices.Equal(got, tt.want) {
				t.Errorf("ParseIncludes(%q) = %q, want %q", tt.config, got, tt.want)
			}
		})
	}
}

// The parser agrees with git itself on every case git accepts (the
// includeIf-without-space case is one git rejects as a whole file).
func TestParseIncludesAgreesWithGit(t *testing.T) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Skip("SKIPPED LOUDLY: git is not installed, the cross-check with git did not run")
	}
	for _, tt := range includeCases {
		t.Run(tt.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "config")
			os.WriteFile(f, []byte(tt.config), 0o644)
			c := exec.Command(gitPath, "config", "--file", f, "--null", "--get-regexp", `^include(if\..*)?\.path$`)
			c.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
			out, err := c.Output()
			if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() != 1 {
				if tt.name != "includeIf without space" {
					t.Fatalf("git rejects this file: %v", err)
				}
				return // git refuses the whole file, so it includes nothing
			}
			var fromGit []string
			for _, rec := range strings.Split(string(out), "\x00") {
				if _, v, ok := strings.Cut(rec, "\n"); ok {
					fromGit = append(fromGit, v)
				}
			}
			got := ParseIncludes([]byte(tt.config))
			// Legacy [include.x] is listed by us, not by git: more is safe.
			if tt.name == "legacy subsection" {
				return
			}
			if !slices.Equal(got, fromGit) {
				t.Errorf("ParseIncludes = %q, git says %q", got, fromGit)
			}
		})
	}
}

func TestParsePointers(t *testing.T) {
	tests := []struct {
		in     string
		gitdir string
		gok    bool
		common string
		cok    bool
	}{
		{"gitdir: ../x\n", "../x", true, "gitdir: ../x", true},
		{"gitdir: /a b/c\r\n", "/a b/c", true, "gitdir: /a b/c", true},
		{"gitdir:/nospace", "/nospace", true, "gitdir:/nospace", true},
		{"../..\n", "", false, "../..", true},
		{"", "", false, "", false},
		{"\n\n", "", false, "", false},
		{"gitdir: \n", "", false, "gitdir: ", true},
		{"gitdir: a\x00b", "", false, "", false},
	}
	for _, tt := range tests {
		g, gok := ParseGitFile([]byte(tt.in))
		c, cok := ParseCommondir([]byte(tt.in))
		if g != tt.gitdir || gok != tt.gok || c != tt.common || cok != tt.cok {
			t.Errorf("%q: gitdir %q %v, commondir %q %v", tt.in, g, gok, c, cok)
		}
	}
}

func FuzzParseIncludes(f *testing.F) {
	for _, tt := range includeCases {
		f.Add([]byte(tt.config))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// An include before the fuzzed content is always found first,
		// whatever follows it (git rejects a file with a bad line as a
		// whole, so what the parser makes of one does not matter).
		more := append([]byte("[include]\npath = moat-fuzz\n"), b...)
		got := ParseIncludes(more)
		if len(got) == 0 || got[0] != "moat-fuzz" {
			t.Fatalf("the include before %q was not found: %q", b, got)
		}
		for _, p := range ParseIncludes(b) {
			if strings.ContainsRune(p, '\n') && !strings.Contains(string(b), "\\n") {
				t.Fatalf("a newline in %q without a \\n escape in %q", p, b)
			}
		}
	})
}

func FuzzParsePointers(f *testing.F) {
	for _, s := range []string{"gitdir: ../x\n", "../..", "", "gitdir:"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, ok := ParseGitFile(b); ok && (p == "" || strings.ContainsAny(p, "\x00") || strings.HasSuffix(p, "\n")) {
			t.Fatalf("ParseGitFile(%q) = %q", b, p)
		}
		if p, ok := ParseCommondir(b); ok && (p == "" || strings.HasSuffix(p, "\n") || strings.HasSuffix(p, "\r")) {
			t.Fatalf("ParseCommondir(%q) = %q", b, p)
		}
	})
}
