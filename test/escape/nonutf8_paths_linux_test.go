//go:build linux

package escape_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNonUTF8PathFlags: a path flag naming a directory whose name is not
// valid UTF-8 (legal on Linux, where names are bytes) gives the sandbox
// that directory, byte for byte, with the flag's rights and no more. Beside
// it sits a decoy whose name is the same with U+FFFD in place of the bad
// byte: what a path mangled to text would name instead. The sandbox must
// read the real directory's file and never the decoy's, and a read-only
// grant must stay read-only. A path that does not exist is refused with
// exit 2, the bad byte escaped, and nothing made on the host.
func TestNonUTF8PathFlags(t *testing.T) {
	const bad = "bad\xff"
	tests := []struct {
		name     string
		flag     func(dir string) []string
		writable bool // the command may create a file in dir
		// missingMade: a missing DIR is created by design (--workdir);
		// otherwise a missing one is refused.
		missingMade bool
	}{
		{"workdir", func(d string) []string { return []string{"--workdir", d} }, true, true},
		{"readable", func(d string) []string { return []string{"--readable", d} }, false, false},
		{"writable", func(d string) []string { return []string{"--writable", d} }, true, false},
		{"grant r", func(d string) []string { return []string{"--grant", d + "=r"} }, false, false},
		{"grant rw", func(d string) []string { return []string{"--grant", d + "=rw"} }, true, false},
		{"home", func(d string) []string { return []string{"--home", d} }, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			real := filepath.Join(root, bad)
			decoy := filepath.Join(root, strings.ToValidUTF8(bad, "\uFFFD"))
			for dir, content := range map[string]string{real: "real\n", decoy: "decoy\n"} {
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "f"+bad), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			script := `cat "$1/f$3"; cat "$2/f$3" 2>/dev/null && echo DECOY-READ; (echo x > "$1/new") 2>/dev/null && echo wrote; exit 0`
			args := append(append([]string{"run"}, tt.flag(real)...), "--", "sh", "-c", script, "sh", real, decoy, bad)
			r := moatCLI(t, root, nil, args...)
			want := "real\n"
			if tt.writable {
				want += "wrote\n"
			}
			if r.Code != 0 || r.Stdout != want {
				t.Fatalf("want exit 0 and %q\n%s", want, r)
			}
			_, err := os.Lstat(filepath.Join(real, "new"))
			if created := err == nil; created != tt.writable {
				t.Errorf("file made in the directory: %v, want %v", created, tt.writable)
			}

			// A missing directory with the same kind of name.
			missing := filepath.Join(root, "missing\xfe")
			r = moatCLI(t, root, nil, append(append([]string{"run"}, tt.flag(missing)...), "--", "true")...)
			_, statErr := os.Lstat(missing)
			if tt.missingMade {
				if r.Code != 0 || statErr != nil {
					t.Errorf("--workdir with a missing DIR: want it made and exit 0; stat %v\n%s", statErr, r)
				}
				return
			}
			if r.Code != 2 || !strings.Contains(r.Stderr, `missing\xfe`) || strings.Count(r.Stderr, "\n") != 1 {
				t.Errorf("want exit 2 and one line naming missing\\xfe, escaped\n%s", r)
			}
			if statErr == nil {
				t.Errorf("a refused run left %q behind", missing)
			}
			ents, _ := os.ReadDir(root)
			if len(ents) != 2 {
				t.Errorf("a refused run left entries in %s: %v", root, ents)
			}
		})
	}
}
