package escape_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExecHomeHardLinkedRunCode: ~/.zshrc hard-linked to ~/dotfiles/zshrc.
// Under writable: ["~"] the read-only mount of ~/.zshrc holds that name
// only, and the sandbox would change the same file through the other one,
// which the pattern makes writable: moat exec refuses to start (exit 2,
// naming the file), and the file is unchanged. Control: with a plain
// ~/.zshrc the same run starts and its write through dotfiles/ lands
// there, not in ~/.zshrc.
func TestExecHomeHardLinkedRunCode(t *testing.T) {
	for _, linked := range []bool{true, false} {
		name := "hard-linked"
		if !linked {
			name = "control: a plain file"
		}
		t.Run(name, func(t *testing.T) {
			home, cwd := execHomeFixture(t)
			rc := filepath.Join(home, ".zshrc")
			other := filepath.Join(home, "dotfiles", "zshrc")
			writeFile(t, other, "orig\n")
			if linked {
				if err := os.Link(other, rc); err != nil {
					t.Fatal(err)
				}
			} else {
				writeFile(t, rc, "orig\n")
			}
			script := `echo planted >> "$HOME/dotfiles/zshrc" && echo WROTE; echo done`
			res := execPolicyPath(t, execHomeDoc(script, []string{"~"}), cwd, home)
			b, err := os.ReadFile(rc)
			if err != nil {
				t.Fatal(err)
			}
			if linked {
				if res.Code != 2 || !strings.Contains(res.Stderr, "hard links") || !strings.Contains(res.Stderr, ".zshrc") || strings.Contains(res.Stdout, "WROTE") {
					t.Fatalf("a hard-linked ~/.zshrc under writable [\"~\"]: want exit 2 naming it, nothing run: %s", res)
				}
				if string(b) != "orig\n" {
					t.Fatalf("~/.zshrc changed to %q", b)
				}
				return
			}
			if res.Code != 0 || !strings.Contains(res.Stdout, "WROTE") {
				t.Fatalf("control: the run should start and write dotfiles/zshrc: %s", res)
			}
			if string(b) != "orig\n" {
				t.Fatalf("control: ~/.zshrc changed to %q", b)
			}
		})
	}
}
