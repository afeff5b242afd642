package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompletionScripts(t *testing.T) {
	tests := []struct {
		shell string
		want  []string // substrings every script of that shell has
	}{
		{"bash", []string{"# bash completion V2 for moat", "__start_moat", "complete -o default -F __start_moat moat"}},
		{"zsh", []string{"#compdef moat", "_moat()"}},
		{"fish", []string{"# fish completion for moat", "complete -c moat"}},
	}
	for _, tt := range tests {
		t.Run(tt.shell, func(t *testing.T) {
			code, stdout, stderr := executeCaptured(t, "completion", tt.shell)
			if code != 0 || stderr != "" {
				t.Fatalf("moat completion %s: exit %d, stderr %q", tt.shell, code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("script lacks %q", w)
				}
			}
			if !strings.Contains(stdout, "__complete") {
				t.Error("script does not ask moat __complete")
			}
		})
	}
}

// TestCompletionBashSyntax has bash parse the script without running it.
func TestCompletionBashSyntax(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash is needed to check the bash script: %v", err)
	}
	_, stdout, _ := executeCaptured(t, "completion", "bash")
	script := filepath.Join(t.TempDir(), "moat.bash")
	if err := os.WriteFile(script, []byte(stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bash, "-n", script).CombinedOutput(); err != nil {
		t.Errorf("bash -n: %v\n%s", err, out)
	}
	// Positive control: bash -n does reject a broken script.
	if err := os.WriteFile(script, []byte(stdout+"\nif then fi {\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command(bash, "-n", script).Run(); err == nil {
		t.Error("bash -n accepted a broken script: the check above proves nothing")
	}
}

func TestCompletionUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no shell", []string{"completion"}, "moat: completion: want one shell: bash, zsh or fish\n"},
		{"two shells", []string{"completion", "bash", "zsh"}, "moat: completion: want one shell: bash, zsh or fish\n"},
		{"unknown shell", []string{"completion", "tcsh"}, "moat: completion: unknown shell \"tcsh\"; want bash, zsh or fish\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := executeCaptured(t, tt.args...)
			if code != exitUsage || stderr != tt.want || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d and %q", code, stdout, stderr, exitUsage, tt.want)
			}
		})
	}
}

// TestCompletionAnswers checks what the scripts get back from moat itself.
func TestCompletionAnswers(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"commands", []string{"__complete", ""}, []string{"run\t", "shell\t", "doctor\t", "completion\t"}},
		{"shells", []string{"__complete", "completion", ""}, []string{"bash", "zsh", "fish"}},
		{"run flags", []string{"__complete", "run", "--qu"}, []string{"--quiet"}},
		{"isolation values", []string{"__complete", "run", "--isolation", ""}, []string{"strict", "default", "permissive"}},
		{"network values", []string{"__complete", "shell", "--network", ""}, []string{"deny", "allow-all", "allow-list"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, _ := executeCaptured(t, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("answer %q lacks %q", stdout, w)
				}
			}
		})
	}
}
