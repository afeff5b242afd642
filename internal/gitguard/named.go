package gitguard

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/moat-sandbox/moat/internal/paths"
)

// Paths a repository's configuration or hooks name. Pinning a git
// directory's control files is not enough when they name a program or a
// directory the sandbox can write: core.hooksPath=.husky/_ (husky), a
// filter whose program is the project's .venv/bin/python (nbstripout),
// the interpreter a pre-commit hook execs, a hook that is a link to a
// tracked script. The host's next git status or git commit would run
// what the sandbox left there. So every key whose value git runs or takes
// as a hooks directory is read, with the program (the first word) and
// every argument that looks like a path, and the targets of links and the
// absolute paths in the hooks. Those that lie in a writable place are
// pinned read-only for the run (Linux, with a mount namespace), recorded
// by [Take] and checked at Close like control files, and reported at
// start.

// NamedRef is a word of a config value or a hook that names a path git
// uses: a program, a path argument, a hooks directory.
type NamedRef struct {
	// Key is the config key, lower-cased except its subsection
	// ("core.hookspath", "filter.nbstripout.clean"), or "hook:NAME" for a
	// path found in a hook. The zero value names nothing.
	Key string
	// Word is the word as written, unresolved.
	Word string
	// Dir is true for a hooks directory (core.hooksPath).
	Dir bool
}

// isDirKey reports whether section.key is a directory of hooks.
func isDirKey(section, key string) bool { return section == "core" && key == "hookspath" }

// commandKey reports whether section.key holds a command line (or a
// program's path) that git runs. section is lower-cased, with its
// subsection after the first dot.
func commandKey(section, key string) bool {
	name, _, hasSub := strings.Cut(section, ".")
	switch name {
	case "core":
		switch key {
		case "fsmonitor", "sshcommand", "editor", "pager", "askpass", "gitproxy":
			return true
		}
	case "sequence":
		return key == "editor"
	case "diff":
		return key == "external" || hasSub && (key == "textconv" || key == "command")
	case "filter":
		return hasSub && (key == "clean" || key == "smudge" || key == "process")
	case "merge":
		return hasSub && key == "driver"
	case "credential":
		return key == "helper"
	case "gpg":
		return key == "program" || hasSub && key == "program" || key == "defaultkeycommand"
	case "remote":
		return hasSub && (key == "uploadpack" || key == "receivepack")
	case "alias":
		return true // "!cmd" runs a shell command
	case "pager":
		return true // pager.<cmd> = a pager program
	case "interactive":
		return key == "difffilter"
	case "submodule":
		return hasSub && key == "update" // "!cmd" in .git/config is honoured
	case "hook":
		return hasSub && key == "command"
	case "trailer":
		return hasSub && (key == "command" || key == "cmd")
	case "difftool", "mergetool", "browser", "man":
		return hasSub && (key == "cmd" || key == "path")
	case "web":
		return key == "browser"
	case "uploadpack":
		return key == "packobjectshook"
	}
	return false
}

// maxWords bounds the words taken from one value.
const maxWords = 64

// ConfigRefs returns the words of a git configuration that name a path
// git runs or uses as hooks: for core.hooksPath the value; for a command
// the program (the first word, after a leading "!") and every other word
// that holds a "/" (or the part after "=" of "--opt=PATH"), URLs left out.
func ConfigRefs(content []byte) []NamedRef {
	var out []NamedRef
	p := &cfgParser{b: content}
	for {
		section, key, value, ok := p.next()
		if !ok {
			return out
		}
		full := section + "." + key
		switch {
		case isDirKey(section, key):
			if value != "" {
				out = append(out, NamedRef{Key: full, Word: value, Dir: true})
			}
		case commandKey(section, key):
			for _, w := range commandWords(value) {
				out = append(out, NamedRef{Key: full, Word: w})
			}
		}
	}
}

// commandWords splits a command line as a shell would, roughly (quotes,
// backslashes, operators end a word), and keeps the program and the words
// that look like paths.
func commandWords(v string) []string {
	v = strings.TrimSpace(v)
	if v == "" || isBoolWord(v) {
		return nil
	}
	v = strings.TrimPrefix(v, "!")
	var out []string
	for i, w := range shellWords(v) {
		if i >= maxWords {
			break
		}
		if strings.Contains(w, "://") || strings.HasPrefix(w, "$") {
			continue
		}
		if j := strings.IndexByte(w, '='); j >= 0 && (strings.HasPrefix(w, "-") || !strings.Contains(w[:j], "/")) {
			w = w[j+1:] // --file=PATH, VAR=PATH
		}
		if w != "" && (i == 0 || strings.Contains(w, "/")) {
			out = append(out, w)
		}
	}
	return out
}

// isBoolWord reports whether v is one of git's boolean words (a
// core.fsmonitor of "true" starts git's own daemon).
func isBoolWord(v string) bool {
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off", "1", "0":
		return true
	}
	return false
}

// shellWords splits s into words: blanks separate, shell operators
// (; | & ( ) < > `) end words, quotes and backslashes are removed.
func shellWords(s string) []string {
	var out []string
	var cur []byte
	in := false
	flush := func() {
		if in {
			out = append(out, string(cur))
		}
		cur, in = cur[:0], false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			flush()
		case strings.IndexByte(";|&()<>`{}", c) >= 0:
			flush()
		case c == '\'':
			in = true
			for i++; i < len(s) && s[i] != '\''; i++ {
				cur = append(cur, s[i])
			}
		case c == '"':
			in = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				cur = append(cur, s[i])
			}
		case c == '\\' && i+1 < len(s):
			i++
			cur, in = append(cur, s[i]), true
		default:
			cur, in = append(cur, c), true
		}
		if len(out) > maxWords {
			break
		}
	}
	flush()
	return out
}

// ScriptRefs returns the absolute paths a hook script names: its
// interpreter (#!) and every word starting with "/" (pre-commit's
// INSTALL_PYTHON=/proj/.venv/bin/python), as "hook:NAME" refs.
func ScriptRefs(name string, content []byte) []NamedRef {
	var out []NamedRef
	seen := map[string]bool{}
	for _, line := range bytes.Split(content, []byte("\n")) {
		for _, w := range shellWords(string(line)) {
			if i := strings.IndexByte(w, '='); i > 0 {
				w = w[i+1:]
			}
			w = strings.TrimPrefix(w, "#!")
			if !strings.HasPrefix(w, "/") || seen[w] || len(w) < 2 {
				continue
			}
			seen[w] = true
			out = append(out, NamedRef{Key: "hook:" + name, Word: w})
			if len(out) >= maxWords {
				return out
			}
		}
	}
	return out
}

// Named is a path that a repository's configuration or hooks name, in a
// writable place or not.
type Named struct {
	// Repo is the git directory whose configuration or hooks name it.
	Repo string
	// Key is the config key or "hook:NAME" that names it.
	Key string
	// Path is the absolute path, cleaned, not through links.
	Path string
	// Dir is true for a hooks directory.
	Dir bool
}

// Named limits: config files read per repository (its own, its includes
// and the global ones), bytes of each, hooks read and bytes of each.
const (
	maxNamedConfigs = 64
	maxNamedConfig  = 1 << 20
	maxNamedHooks   = 64
	maxNamedScript  = 64 << 10
)

// GlobalConfigs are the system and global git config files git reads for
// every repository of this user, in the order git reads them.
func GlobalConfigs(home string) []string {
	var out []string
	if p := os.Getenv("GIT_CONFIG_SYSTEM"); p != "" {
		out = append(out, p)
	} else {
		out = append(out, "/etc/gitconfig")
	}
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	if xdg != "" {
		out = append(out, filepath.Join(xdg, "git", "config"))
	}
	if p := os.Getenv("GIT_CONFIG_GLOBAL"); p != "" {
		out = append(out, p)
	} else if home != "" {
		out = append(out, filepath.Join(home, ".gitconfig"))
	}
	return out
}

// CollectNamed returns the paths the git directory g's effective
// configuration (global, its config and config.worktree, their includes)
// and its hooks name, resolved as git does: a relative hooks directory or
// program against the worktree top (top, or g itself when empty), "~/"
// against home. It reads every file bounded and not through a final link.
// incomplete says what could not be read within the bounds; the caller
// then keeps what it has and reports it.
func CollectNamed(g, top, home string) (found []Named, incomplete string) {
	if top == "" {
		top = g
	}
	seen := map[string]bool{}
	add := func(key, p string, dir bool) {
		p = filepath.Clean(p)
		if seen[key+"\x00"+p] {
			return
		}
		seen[key+"\x00"+p] = true
		found = append(found, Named{Repo: g, Key: key, Path: p, Dir: dir})
	}
	resolveWord := func(w string) (string, bool) {
		switch {
		case strings.HasPrefix(w, "~/"):
			if home == "" {
				return "", false
			}
			return filepath.Join(home, w[2:]), true
		case strings.HasPrefix(w, "~"):
			return "", false
		case filepath.IsAbs(w):
			return w, true
		}
		return filepath.Join(top, w), true
	}
	files := GlobalConfigs(home)
	common := g
	if b, err := readBounded(filepath.Join(g, "commondir"), 64<<10); err == nil {
		if c, ok := ParseCommondir(b); ok {
			common = resolve(g, c) // a linked worktree: config and hooks are the common directory's
			files = append(files, filepath.Join(common, "config"))
		}
	}
	for _, n := range ConfigNames {
		files = append(files, filepath.Join(g, n))
	}
	read := 0
	var hookDirs []string
	var walk func(file string, level int)
	walk = func(file string, level int) {
		if seen["cfg\x00"+file] {
			return
		}
		seen["cfg\x00"+file] = true
		if r, err := filepath.EvalSymlinks(file); err == nil {
			file = r // git follows a linked config (dotfile managers make them)
		}
		b, err := readBounded(file, maxNamedConfig)
		if err != nil {
			if !os.IsNotExist(err) && incomplete == "" {
				incomplete = file + ": " + err.Error()
			}
			return
		}
		if read++; read > maxNamedConfigs || level > maxIncludeDepth {
			if incomplete == "" {
				incomplete = "more config files or include levels than the bounds allow"
			}
			return
		}
		for _, r := range ConfigRefs(b) {
			if !r.Dir && !strings.Contains(r.Word, "/") {
				continue // a bare name is looked up in PATH
			}
			if p, ok := resolveWord(r.Word); ok {
				add(r.Key, p, r.Dir)
				if r.Dir {
					hookDirs = append(hookDirs, filepath.Clean(p))
				}
			}
		}
		for _, inc := range ParseIncludes(b) {
			if p, ok := ResolveInclude(file, inc, home); ok {
				walk(p, level+1)
			}
		}
	}
	for _, f := range files {
		walk(f, 0)
	}
	hookDirs = append(hookDirs, filepath.Join(common, "hooks"))
	hooks := 0
	for _, d := range hookDirs {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		entries, err := readDirBounded(d, maxNamedHooks+1)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".sample") || e.Name() == ".moat-placeholder" {
				continue // git runs hooks by their exact names only
			}
			if hooks++; hooks > maxNamedHooks {
				if incomplete == "" {
					incomplete = d + ": more hooks than the bound"
				}
				break
			}
			p := filepath.Join(d, e.Name())
			fi, err := os.Lstat(p)
			if err != nil {
				continue
			}
			if fi.Mode()&os.ModeSymlink != 0 {
				if t, err := filepath.EvalSymlinks(p); err == nil {
					add("hook:"+e.Name(), t, false)
					p = t
				} else if l, err := os.Readlink(p); err == nil {
					add("hook:"+e.Name(), resolve(d, l), false) // absent target: the sandbox could create it
					continue
				}
			}
			b, err := readBounded(p, maxNamedScript)
			if err != nil {
				continue
			}
			for _, r := range ScriptRefs(e.Name(), b) {
				add(r.Key, r.Word, false)
			}
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].Path < found[j].Path })
	return found, incomplete
}

// readBounded reads a regular file of at most max bytes, the last
// component not through a link.
func readBounded(p string, max int64) ([]byte, error) {
	f, err := openNoFollow(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, os.ErrNotExist
	}
	if fi.Size() > max {
		return nil, errTooLarge
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = errTooLarge
	}
	return b, err
}

type tooLarge struct{}

func (tooLarge) Error() string { return "larger than the bound on what is read" }

var errTooLarge error = tooLarge{}

// readDirBounded lists up to n entries of dir, not through a link.
func readDirBounded(dir string, n int) ([]os.DirEntry, error) {
	f, err := openDirEntries(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(n)
	if err != nil && err != io.EOF {
		return nil, err
	}
	return entries, nil
}

// VenvRoot returns the Python virtual environment (a directory holding
// pyvenv.cfg) that p lies in, looking no higher than stop; "" if none.
// A program there imports from the environment's site-packages, so
// pinning the one file does not make it safe.
func VenvRoot(p, stop string) string {
	for d := filepath.Dir(p); paths.Under(d, stop) && d != stop; d = filepath.Dir(d) {
		if fi, err := os.Lstat(filepath.Join(d, "pyvenv.cfg")); err == nil && fi.Mode().IsRegular() {
			return d
		}
	}
	return ""
}

// HooksPathPin is the directory to pin for a hooks directory dir: husky
// (v9) sets core.hooksPath to .husky/_, whose hooks run the scripts one
// level up (.husky/pre-commit), so that parent is pinned instead.
func HooksPathPin(dir string) string {
	if filepath.Base(dir) == "_" {
		return filepath.Dir(dir)
	}
	return dir
}
