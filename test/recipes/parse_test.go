package recipes_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// recipe is one "### NAME" recipe of the README's "## Recipes" section.
type recipe struct {
	Name     string   // the heading's text, without "### "
	Line     int      // the heading's line number in the README (1-based)
	Commands []string // the fenced block's lines that start with "moat ", continuations joined, comments removed
	Shown    []string // the block's other lines: shown to the reader, not run
}

// maxReadme bounds the README the parser accepts: far above a README of
// about 150 lines, far below anything that would slow the test.
const maxReadme = 1 << 20

// parseRecipes returns the recipes of the "## Recipes" section of readme,
// in order. Under each "### NAME" heading it wants exactly one fenced block
// opened with "```sh"; an empty or missing section, a heading without a
// block, a second block, an unclosed block, or an unterminated "\"
// continuation are errors, so that a README the test cannot read fails the
// test instead of running nothing.
func parseRecipes(readme string) ([]recipe, error) {
	if len(readme) > maxReadme {
		return nil, fmt.Errorf("README is %d bytes, more than the %d the recipe test reads", len(readme), maxReadme)
	}
	lines := strings.Split(readme, "\n")
	var out []recipe
	in := false      // inside "## Recipes"
	found := false   // saw "## Recipes"
	fence := false   // inside any fenced block
	shFence := false // inside a recipe's sh block
	var cur *recipe
	blocks := 0 // sh blocks under cur
	var pending string
	pendingLine := 0
	finish := func() error {
		if cur == nil {
			return nil
		}
		if blocks != 1 {
			return fmt.Errorf("line %d: recipe %q has %d ```sh blocks, want exactly one", cur.Line, cur.Name, blocks)
		}
		out = append(out, *cur)
		cur = nil
		return nil
	}
	for i, raw := range lines {
		n := i + 1
		line := strings.TrimRight(raw, "\r")
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			if fence {
				if shFence && pending != "" {
					return nil, fmt.Errorf("line %d: a \"\\\" continuation runs into the end of the block", pendingLine)
				}
				fence, shFence = false, false
				continue
			}
			fence = true
			if in && cur != nil && strings.TrimSpace(strings.TrimPrefix(trimmed, "```")) == "sh" {
				shFence = true
				blocks++
			}
			continue
		}
		if fence {
			if !shFence || blocks != 1 {
				continue
			}
			joined := pending + line
			if strings.HasSuffix(joined, "\\") {
				if pending == "" {
					pendingLine = n
				}
				pending = strings.TrimSuffix(joined, "\\") + " "
				continue
			}
			pending = ""
			cmd := strings.TrimSpace(stripComment(joined))
			switch {
			case cmd == "":
			case strings.HasPrefix(cmd, "moat "):
				cur.Commands = append(cur.Commands, cmd)
			default:
				cur.Shown = append(cur.Shown, cmd)
			}
			continue
		}
		switch {
		case strings.HasPrefix(line, "## "):
			if err := finish(); err != nil {
				return nil, err
			}
			in = false
			if strings.TrimSpace(line[3:]) == "Recipes" {
				if found {
					return nil, fmt.Errorf("line %d: a second \"## Recipes\" section", n)
				}
				in, found = true, true
			}
		case in && strings.HasPrefix(line, "### "):
			if err := finish(); err != nil {
				return nil, err
			}
			cur = &recipe{Name: strings.TrimSpace(line[4:]), Line: n}
			blocks = 0
		}
	}
	if fence {
		return nil, errors.New("a fenced block is not closed at the end of the README")
	}
	if err := finish(); err != nil {
		return nil, err
	}
	if !found {
		return nil, errors.New(`the README has no "## Recipes" section`)
	}
	if len(out) == 0 {
		return nil, errors.New(`the "## Recipes" section has no "### NAME" recipe`)
	}
	return out, nil
}

// stripComment removes a shell comment from line: a "#" at the start of a
// word, outside single and double quotes.
func stripComment(line string) string {
	var quote rune
	prevSpace := true
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && prevSpace:
			return line[:i]
		}
		prevSpace = r == ' ' || r == '\t'
	}
	return line
}

func TestParseRecipes(t *testing.T) {
	const good = "# moat\n\n## Install\n\n```sh\nmoat run -- not a recipe\n```\n\n## Recipes\n\nIntro.\n\n" +
		"### Go\n\nText.\n\n```sh\ncd myproject\nmoat run --workdir . -- go vet ./...   # vet\nmoat run --build \\\n  --workdir . -- go test ./...\n```\n\n" +
		"### make\n\n```sh\nmoat run --workdir . -- sh -c 'echo \"#not a comment\"' # a comment\n```\n\n## Next\n\n### Not a recipe\n\n```sh\nmoat run -- x\n```\n"
	tests := []struct {
		name   string
		readme string
		want   []recipe
		err    string
	}{
		{name: "two recipes", readme: good, want: []recipe{
			{Name: "Go", Line: 13, Commands: []string{"moat run --workdir . -- go vet ./...", "moat run --build    --workdir . -- go test ./..."}, Shown: []string{"cd myproject"}},
			{Name: "make", Line: 24, Commands: []string{`moat run --workdir . -- sh -c 'echo "#not a comment"'`}},
		}},
		{name: "no section", readme: "# x\n## Other\n", err: `no "## Recipes" section`},
		{name: "empty section", readme: "## Recipes\n\ntext\n## Next\n", err: "has no \"### NAME\" recipe"},
		{name: "no block", readme: "## Recipes\n### Go\ntext\n", err: "has 0 ```sh blocks"},
		{name: "two blocks", readme: "## Recipes\n### Go\n```sh\nmoat run -- a\n```\n```sh\nmoat run -- b\n```\n", err: "has 2 ```sh blocks"},
		{name: "another language is not a recipe block", readme: "## Recipes\n### Go\n```toml\nx = 1\n```\n", err: "has 0 ```sh blocks"},
		{name: "unclosed block", readme: "## Recipes\n### Go\n```sh\nmoat run -- a\n", err: "not closed"},
		{name: "continuation into the fence", readme: "## Recipes\n### Go\n```sh\nmoat run \\\n```\n", err: "continuation runs into"},
		{name: "two sections", readme: "## Recipes\n### Go\n```sh\nmoat run -- a\n```\n## Recipes\n", err: "second"},
		{name: "CRLF", readme: "## Recipes\r\n### Go\r\n```sh\r\nmoat run -- a\r\n```\r\n", want: []recipe{{Name: "Go", Line: 2, Commands: []string{"moat run -- a"}}}},
		{name: "too large", readme: strings.Repeat("x", maxReadme+1), err: "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseRecipes(tt.readme)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", tt.want) {
				t.Fatalf("got  %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

// FuzzParseRecipes: the parser never panics, and every command it returns
// starts with "moat ", holds no newline, and belongs to a named recipe.
func FuzzParseRecipes(f *testing.F) {
	f.Add("## Recipes\n### Go\n```sh\nmoat run -- go test ./... # c\n```\n")
	f.Add("## Recipes\n### Go\n```sh\nmoat run \\\n -- a\n```\n### make\n```sh\nmoat run -- make\n```\n## X\n")
	f.Add("```\n## Recipes\n```\n")
	f.Add("## Recipes\n### \n```sh\n```\n")
	f.Fuzz(func(t *testing.T, readme string) {
		rs, err := parseRecipes(readme)
		if err != nil {
			return
		}
		for _, r := range rs {
			for _, c := range r.Commands {
				if !strings.HasPrefix(c, "moat ") || strings.Contains(c, "\n") {
					t.Fatalf("recipe %q: bad command %q", r.Name, c)
				}
			}
		}
	})
}
