package controlfiles

import "testing"

func TestTop(t *testing.T) {
	for name, want := range map[string]Class{
		".envrc": RunsCode, ".vscode": RunsCode, "x.code-workspace": RunsCode, ".code-workspace": None,
		".moat-write": RunsCode, ".moat-": None, ".heimdall-deny": RunsCode, "moat.toml": RunsCode,
		".claude": RunsCode, ".mcp.json": RunsCode, ".cargo": None, ".npmrc": RunsCode,
		"AGENTS.md": Instructs, "CLAUDE.md": Instructs, ".cursorrules": Instructs,
		".github": None, "README.md": None, "src": None, ".git": None, "agents.md": None,
	} {
		if got := Top(name); got != want {
			t.Errorf("Top(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestNested(t *testing.T) {
	n := Nested(".github")
	if len(n) != 1 || n[0].Path != ".github/copilot-instructions.md" || n[0].Class != Instructs {
		t.Errorf("Nested(.github) = %v", n)
	}
	if c := Nested(".cargo"); len(c) != 2 || c[0].Class != RunsCode {
		t.Errorf("Nested(.cargo) = %v", c)
	}
	if got := NestedRunsCode(); len(got) != 2 || got[0] != ".cargo/config.toml" {
		t.Errorf("NestedRunsCode() = %q", got)
	}
	if len(Nested(".vscode")) != 0 {
		t.Error(".vscode is covered whole, not by nested rows")
	}
}

func TestToolOf(t *testing.T) {
	for rel, want := range map[string]string{".vscode/tasks.json": "VS Code (tasks, settings, mcp.json)", ".envrc": "direnv", "src/x": ""} {
		if got := ToolOf(rel); got != want {
			t.Errorf("ToolOf(%q) = %q, want %q", rel, got, want)
		}
	}
}

// FuzzTop: classification never panics and is decided by the name alone.
func FuzzTop(f *testing.F) {
	for _, e := range Table {
		f.Add(e.Path)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if Top(name) != Top(name) {
			t.Fatal("unstable")
		}
		_ = ToolOf(name)
	})
}
