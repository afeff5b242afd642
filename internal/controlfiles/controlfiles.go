// Package controlfiles is moat's one table of control files: the entries
// of a project that make a host tool run code, or that instruct a host
// agent, when the user works there after a run. Pinning at start (a
// read-only bind of each that exists), the close-time check and the
// quarantine (internal/gitguard, the run journal) and, later, the
// workspace's apply all read this table, so that a name added here is
// covered by all of them.
//
// Git's own control files inside a git directory (config, hooks/, info/,
// commondir, ...) are internal/gitguard's: they live in any directory a
// repository can be made in, not only at the top of a place. Everything
// else is named here, relative to the top of a writable place, because
// that is where the host tools look for them: direnv, mise, pre-commit,
// an editor opening the folder, an agent started there, cargo and npm
// run from there, a dev container built from there, moat run there.
package controlfiles

import "strings"

// Class says what a control file can do on the host.
type Class uint8

const (
	// None is the zero value: not a control file.
	None Class = iota
	// RunsCode files make a host tool run code: pinned (read-only) if
	// they exist at start, set aside if the run makes or changes them.
	RunsCode
	// Instructs files instruct a host agent: reported when the run makes
	// or changes them, and left in place (they are ordinary project
	// files that a sandbox may be asked to edit).
	Instructs
)

// Entry is one row of the table.
type Entry struct {
	// Path is relative to the top of a place, with "/" separators;
	// a leading "*" matches any name with the rest as suffix.
	Path string
	// Class is what the file can do.
	Class Class
	// Tool names what reads it, for reports.
	Tool string
}

// Table is the list. A directory entry (no "/" inside, a directory on
// disk) covers everything in it.
var Table = []Entry{
	// Environment loaders, run on cd or by the prompt.
	{".envrc", RunsCode, "direnv"},
	{".mise.toml", RunsCode, "mise"},
	{"mise.toml", RunsCode, "mise"},
	{".pre-commit-config.yaml", RunsCode, "pre-commit"},
	// Editors.
	{".vscode", RunsCode, "VS Code (tasks, settings, mcp.json)"},
	{"*.code-workspace", RunsCode, "VS Code"},
	{".idea", RunsCode, "JetBrains IDEs"},
	{".exrc", RunsCode, "vi"},
	{".nvim.lua", RunsCode, "Neovim"},
	{".nvimrc", RunsCode, "Neovim"},
	{".lvimrc", RunsCode, "Vim local-vimrc"},
	// Agents: configuration, hooks, MCP servers, skills.
	{".claude", RunsCode, "Claude Code"},
	{".cursor", RunsCode, "Cursor"},
	{".codex", RunsCode, "Codex"},
	{".gemini", RunsCode, "Gemini CLI"},
	{".mcp.json", RunsCode, "MCP clients"},
	{".agents", RunsCode, "agent skills"},
	{".pi", RunsCode, "pi agent"},
	// Toolchains.
	{".cargo/config.toml", RunsCode, "cargo (runners, linkers, aliases)"},
	{".cargo/config", RunsCode, "cargo (runners, linkers, aliases)"},
	{".npmrc", RunsCode, "npm"},
	{".yarnrc", RunsCode, "yarn"},
	{".yarnrc.yml", RunsCode, "yarn"},
	{".pnpmfile.cjs", RunsCode, "pnpm"},
	{".devcontainer", RunsCode, "dev containers"},
	{".devcontainer.json", RunsCode, "dev containers"},
	// moat's and Heimdall's own configuration, policies and fragments.
	{"moat.toml", RunsCode, "moat --config"},
	{".moat-*", RunsCode, "moat fragments and state"},
	{".heimdall-*", RunsCode, "Heimdall fragments"},
	// Instructions to a host agent.
	{"AGENTS.md", Instructs, "coding agents"},
	{"CLAUDE.md", Instructs, "Claude Code"},
	{"CLAUDE.local.md", Instructs, "Claude Code"},
	{"GEMINI.md", Instructs, "Gemini CLI"},
	{".cursorrules", Instructs, "Cursor"},
	{".windsurfrules", Instructs, "Windsurf"},
	{".github/copilot-instructions.md", Instructs, "GitHub Copilot"},
}

// Top classifies name, one entry at the top of a place. It reports None
// for a name the table does not hold at the top (nested rows are found
// with [Nested]).
func Top(name string) Class {
	for _, e := range Table {
		if !strings.Contains(e.Path, "/") && match(e.Path, name) {
			return e.Class
		}
	}
	return None
}

// NestedRunsCode returns the paths of the rows of class RunsCode that lie
// below a directory at the top of a place (".cargo/config.toml"): the
// directory itself is no control file (.cargo may hold a whole cargo
// home), only these files in it are.
func NestedRunsCode() []string {
	var out []string
	for _, e := range Table {
		if e.Class == RunsCode && strings.Contains(e.Path, "/") {
			out = append(out, e.Path)
		}
	}
	return out
}

// Nested returns the rows below a directory at the top of a place named
// dir (".github" gives ".github/copilot-instructions.md").
func Nested(dir string) []Entry {
	var out []Entry
	for _, e := range Table {
		if first, _, ok := strings.Cut(e.Path, "/"); ok && first == dir {
			out = append(out, e)
		}
	}
	return out
}

// ToolOf names the tool that reads the entry at rel (relative to the top
// of a place), or "" when the table has no row for it.
func ToolOf(rel string) string {
	for _, e := range Table {
		if match(e.Path, rel) || !strings.Contains(e.Path, "/") && strings.HasPrefix(rel, e.Path+"/") {
			return e.Tool
		}
	}
	return ""
}

func match(pattern, name string) bool {
	switch {
	case strings.HasPrefix(pattern, "*"):
		return strings.HasSuffix(name, pattern[1:]) && len(name) > len(pattern)-1
	case strings.HasSuffix(pattern, "*"):
		return strings.HasPrefix(name, pattern[:len(pattern)-1]) && len(name) > len(pattern)-1
	}
	return name == pattern
}
