package gitguard

import (
	"sort"
	"strings"
)

// A repository the sandbox created keeps its work: its objects, refs,
// index, logs and history stay where they are. Only what makes a host git
// run a program is set aside: hooks/, info/ (attributes select drivers),
// config.worktree, commondir, gitdir, and the config itself, which is
// replaced by its inert part ([SanitizeConfig]). The sandbox's config is
// kept in the quarantine.

// inertKeys are the config keys, "section.key" for a section without a
// subsection and "section.*.key" for one with, whose values git reads as
// data only: formats, file-system behaviour, names, and branch tracking.
// Everything else is dropped: include.path and includeIf (they read
// other files), core.fsmonitor, core.hooksPath, core.sshCommand,
// core.editor, core.pager, core.askPass, core.worktree, alias.*,
// filter.*, diff.*, merge.*, credential.*, url.*.insteadOf,
// remote.*.uploadpack and receivepack, protocol.*, gpg.*, sequence.editor
// and every key this list does not know.
var inertKeys = map[string]bool{
	"core.repositoryformatversion": true,
	"core.bare":                    true,
	"core.filemode":                true,
	"core.logallrefupdates":        true,
	"core.ignorecase":              true,
	"core.precomposeunicode":       true,
	"core.symlinks":                true,
	"core.autocrlf":                true,
	"core.eol":                     true,
	"core.safecrlf":                true,
	"core.quotepath":               true,
	"core.checkstat":               true,
	"core.trustctime":              true,
	"extensions.objectformat":      true,
	"extensions.refstorage":        true,
	"init.defaultbranch":           true,
	"user.name":                    true,
	"user.email":                   true,
	"branch.*.remote":              true,
	"branch.*.merge":               true,
	"remote.*.url":                 true,
	"remote.*.pushurl":             true,
	"remote.*.fetch":               true,
	"remote.*.push":                true,
}

// SanitizeConfig parses content as a git config file written by a
// sandbox and returns a config holding only its inert keys (inertKeys),
// and the keys it dropped, sorted and without repeats. A remote URL is
// kept only when it names a plain transport (http, https, ssh, git, an
// scp-like host:path, a local path): never ext::, fd:: or another
// helper::. Values are written back quoted, so that nothing in them can
// start a new section or key.
func SanitizeConfig(content []byte) (out []byte, dropped []string) {
	var b strings.Builder
	drop := map[string]bool{}
	cur := "\x00"
	p := &cfgParser{b: content}
	for {
		section, key, value, ok := p.next()
		if !ok {
			break
		}
		name, sub, hasSub := strings.Cut(section, ".")
		pattern := name + "." + key
		if hasSub {
			pattern = name + ".*." + key
		}
		if !inertKeys[pattern] || !cleanText(sub) || !cleanText(value) ||
			(key == "url" || key == "pushurl") && !plainURL(value) {
			drop[pattern] = true
			continue
		}
		if section != cur {
			cur = section
			if hasSub {
				b.WriteString("[" + name + " " + quote(sub) + "]\n")
			} else {
				b.WriteString("[" + name + "]\n")
			}
		}
		b.WriteString("\t" + key + " = " + quote(value) + "\n")
	}
	for k := range drop {
		dropped = append(dropped, k)
	}
	sort.Strings(dropped)
	return []byte(b.String()), dropped
}

// cleanText reports whether s holds no line break and no NUL.
func cleanText(s string) bool { return !strings.ContainsAny(s, "\n\r\x00") }

// quote writes s as a git config quoted string.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}

// plainURL reports whether u is a URL git reaches with a built-in
// transport and no command of the config's choosing.
func plainURL(u string) bool {
	if u == "" || strings.Contains(u, "::") || strings.HasPrefix(u, "-") {
		return false
	}
	for _, scheme := range []string{"https://", "http://", "ssh://", "git://", "file://"} {
		if strings.HasPrefix(strings.ToLower(u), scheme) {
			rest := u[len(scheme):]
			return !strings.HasPrefix(rest, "-") && !strings.Contains(rest, "@-")
		}
	}
	if strings.HasPrefix(u, "/") || strings.HasPrefix(u, "./") || strings.HasPrefix(u, "../") {
		return true
	}
	// scp-like [user@]host:path; anything else with "://" is a helper.
	if strings.Contains(u, "://") {
		return false
	}
	hostPart, _, ok := strings.Cut(u, ":")
	if !ok {
		return !strings.ContainsAny(u, " \t")
	}
	if at := strings.LastIndex(hostPart, "@"); at >= 0 {
		hostPart = hostPart[at+1:]
	}
	return hostPart != "" && !strings.HasPrefix(hostPart, "-") && !strings.ContainsAny(hostPart, " \t'\"`$;|&<>()\\")
}
