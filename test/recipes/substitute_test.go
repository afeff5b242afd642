package recipes_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// The README's recipes name the real registries; the test never reaches
// them. It rewrites each command by these exact textual rules, in order,
// and fails on a command that still names a real host afterwards:
//
//  1. npm: "--allow-domain registry.npmjs.org" (or "=registry.npmjs.org")
//     becomes "--allow-domain REG --allow-local STANDIN --env
//     npm_config_registry=http://REG/", REG being the test's npm tarball
//     registry on the loopback stand-in address (STANDIN:PORT).
//  2. pip: "--index-url https://pypi.org/simple" (with or without the
//     trailing slash; "=" spelling too) becomes "--find-links WHEELS
//     --no-index", WHEELS being a directory of wheels the test builds.
//     "--allow-domain pypi.org" and "--allow-domain files.pythonhosted.org"
//     are removed; on "moat run" or "moat shell" that removal adds
//     "--readable WHEELS --env PIP_FIND_LINKS=WHEELS --env PIP_NO_INDEX=1"
//     after the subcommand, so pip inside the sandbox installs offline.
//     A "moat python" line that installs packages (-p, --package) and has
//     no --find-links gets "--find-links WHEELS --no-index" after the
//     subcommand: its install sandbox would otherwise use pypi.org.
//  3. cargo: "--allow-domain" of crates.io, index.crates.io or
//     static.crates.io is removed: the fixture crate vendors its
//     dependency and replaces the crates.io source in .cargo/config.toml.
//  4. go: "--allow-domain" of proxy.golang.org or sum.golang.org is
//     removed: the fixture module has no dependencies.
//  5. When rules 2 to 4 removed every --allow-domain of a line,
//     "--network allow-list" (or "=allow-list") is removed too.
//
// STANDIN is 127.0.0.2, not 127.0.0.1: a sandbox's clients reach
// 127.0.0.1, localhost and ::1 directly (moat's NO_PROXY), so only another
// loopback address goes through moat's proxy and its allow list, as a real
// registry does.
const standIn = "127.0.0.2"

// standIns are the loopback stand-ins of one test run.
type standIns struct {
	NpmRegistry string // host:port of the npm tarball registry
	Wheels      string // directory of the wheels pip installs from
}

// Real hosts a rewritten command may not name; one left is an unmapped
// recipe.
var realHosts = []string{
	"registry.npmjs.org", "npmjs.com", "registry.yarnpkg.com", "pypi.org", "pythonhosted.org",
	"crates.io", "golang.org", "github.com", "githubusercontent.com", "gitlab.com",
}

var (
	allowDomainRE = regexp.MustCompile(`(?:^|\s)--allow-domain(?:=|\s+)(\S+)`)
	networkListRE = regexp.MustCompile(`\s--network(?:=|\s+)allow-list(?:\s|$)`)
	subcommandRE  = regexp.MustCompile(`^moat\s+(\S+)`)
	packageFlagRE = regexp.MustCompile(`\s(?:-p|--package)(?:=|\s+)\S`)
	urlRE         = regexp.MustCompile(`[a-z][a-z0-9+.-]*://[^\s'"]+`)
)

// removeFlag removes every "FLAG VALUE" and "FLAG=VALUE" of value from
// cmd, and reports whether it removed one.
func removeFlag(cmd *string, flag, value string) bool {
	removed := false
	for _, form := range []string{" " + flag + " " + value, " " + flag + "=" + value} {
		for {
			i := strings.Index(*cmd+" ", form+" ")
			if i < 0 {
				break
			}
			*cmd = (*cmd)[:i] + (*cmd)[i+len(form):]
			removed = true
		}
	}
	return removed
}

// replaceFlag replaces every "FLAG VALUE" and "FLAG=VALUE" of value in cmd
// with repl, and reports whether it replaced one.
func replaceFlag(cmd *string, flag, value, repl string) bool {
	replaced := false
	for _, form := range []string{" " + flag + " " + value, " " + flag + "=" + value} {
		for {
			i := strings.Index(*cmd+" ", form+" ")
			if i < 0 {
				break
			}
			*cmd = (*cmd)[:i] + " " + repl + (*cmd)[i+len(form):]
			replaced = true
		}
	}
	return replaced
}

// insertAfterSubcommand puts extra after "moat SUBCOMMAND".
func insertAfterSubcommand(cmd, extra string) string {
	m := subcommandRE.FindStringIndex(cmd)
	if m == nil {
		return cmd
	}
	return cmd[:m[1]] + " " + extra + cmd[m[1]:]
}

// substitute rewrites one recipe command by the rules above, or says why
// it cannot: the command is unmapped.
func substitute(cmd string, s standIns) (string, error) {
	if strings.ContainsAny(cmd, "\n\r") {
		return "", fmt.Errorf("a command with a line break: %q", cmd)
	}
	sub := ""
	if m := subcommandRE.FindStringSubmatch(cmd); m != nil {
		sub = m[1]
	}
	out := cmd
	// 1. npm.
	npmFlags := "--allow-domain " + s.NpmRegistry + " --allow-local " + standIn + " --env npm_config_registry=http://" + s.NpmRegistry + "/"
	replaceFlag(&out, "--allow-domain", "registry.npmjs.org", npmFlags)
	// 2. pip.
	for _, idx := range []string{"https://pypi.org/simple/", "https://pypi.org/simple"} {
		replaceFlag(&out, "--index-url", idx, "--find-links "+s.Wheels+" --no-index")
	}
	removedDomain := false
	pip := false
	for _, d := range []string{"pypi.org", "files.pythonhosted.org"} {
		if removeFlag(&out, "--allow-domain", d) {
			removedDomain, pip = true, true
		}
	}
	if pip && (sub == "run" || sub == "shell") {
		out = insertAfterSubcommand(out, "--readable "+s.Wheels+" --env PIP_FIND_LINKS="+s.Wheels+" --env PIP_NO_INDEX=1")
	}
	if sub == "python" && packageFlagRE.MatchString(out) && !strings.Contains(out, "--find-links") {
		out = insertAfterSubcommand(out, "--find-links "+s.Wheels+" --no-index")
	}
	// 3. cargo, 4. go.
	for _, d := range []string{"crates.io", "index.crates.io", "static.crates.io", "proxy.golang.org", "sum.golang.org"} {
		if removeFlag(&out, "--allow-domain", d) {
			removedDomain = true
		}
	}
	// 5.
	if removedDomain && !allowDomainRE.MatchString(out) {
		for _, form := range []string{" --network allow-list", " --network=allow-list"} {
			removeFlag(&out, strings.Fields(strings.ReplaceAll(form, "=", " "))[0], "allow-list")
		}
	}
	// What is left must name only the stand-ins.
	for _, m := range allowDomainRE.FindAllStringSubmatch(out, -1) {
		if m[1] != s.NpmRegistry {
			return "", fmt.Errorf("unmapped: --allow-domain %s has no loopback stand-in (the substitution rules are in substitute_test.go)", m[1])
		}
	}
	lower := strings.ToLower(out)
	for _, h := range realHosts {
		if strings.Contains(lower, h) {
			return "", fmt.Errorf("unmapped: the command still names %s after substitution: %s", h, out)
		}
	}
	for _, u := range urlRE.FindAllString(out, -1) {
		if !strings.HasPrefix(u, "http://"+standIn+":") {
			return "", fmt.Errorf("unmapped: the command names the URL %s, which has no loopback stand-in", u)
		}
	}
	return strings.Join(strings.Fields(out), " "), nil
}

func TestSubstitute(t *testing.T) {
	s := standIns{NpmRegistry: "127.0.0.2:4873", Wheels: "/w"}
	npm := "--allow-domain 127.0.0.2:4873 --allow-local 127.0.0.2 --env npm_config_registry=http://127.0.0.2:4873/"
	tests := []struct {
		name, in, want, err string
	}{
		{name: "nothing to map", in: "moat run --build --workdir . -- go test ./...", want: "moat run --build --workdir . -- go test ./..."},
		{name: "npm", in: "moat run --network allow-list --allow-domain registry.npmjs.org --workdir . -- npm install",
			want: "moat run --network allow-list " + npm + " --workdir . -- npm install"},
		{name: "npm, = spelling", in: "moat run --network=allow-list --allow-domain=registry.npmjs.org -- npm ci",
			want: "moat run --network=allow-list " + npm + " -- npm ci"},
		{name: "pip index url", in: "moat python --index-url https://pypi.org/simple -p requests app.py",
			want: "moat python --find-links /w --no-index -p requests app.py"},
		{name: "pip in moat run", in: "moat run --network allow-list --allow-domain pypi.org --allow-domain files.pythonhosted.org --build --workdir . -- .venv/bin/pip install -r requirements.txt",
			want: "moat run --readable /w --env PIP_FIND_LINKS=/w --env PIP_NO_INDEX=1 --build --workdir . -- .venv/bin/pip install -r requirements.txt"},
		{name: "moat python installing", in: "moat python --venv .venv -p requests main.py",
			want: "moat python --find-links /w --no-index --venv .venv -p requests main.py"},
		{name: "moat python not installing", in: "moat python main.py", want: "moat python main.py"},
		{name: "cargo", in: "moat run --network allow-list --allow-domain crates.io --allow-domain static.crates.io --build -- cargo test",
			want: "moat run --build -- cargo test"},
		{name: "go", in: "moat run --network allow-list --allow-domain proxy.golang.org -- go mod download", want: "moat run -- go mod download"},
		{name: "a domain kept keeps the allow list", in: "moat run --network allow-list --allow-domain registry.npmjs.org --allow-domain crates.io -- x",
			want: "moat run --network allow-list " + npm + " -- x"},
		{name: "unknown domain", in: "moat run --network allow-list --allow-domain example.com -- curl x", err: "--allow-domain example.com has no loopback stand-in"},
		{name: "github", in: "moat run -- git clone https://github.com/x/y", err: "names github.com"},
		{name: "other url", in: "moat run -- curl https://example.com/", err: "names the URL https://example.com/"},
		{name: "not a prefix of a longer name", in: "moat run --network allow-list --allow-domain pypi.org.evil.example -- x", err: "unmapped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := substitute(tt.in, s)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("substitute = %q, %v; want an error containing %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("substitute =\n  %q, %v\nwant\n  %q", got, err, tt.want)
			}
		})
	}
}

// FuzzSubstitute: a rewritten command never names a real registry host.
func FuzzSubstitute(f *testing.F) {
	f.Add("moat run --network allow-list --allow-domain registry.npmjs.org -- npm install")
	f.Add("moat python --index-url https://pypi.org/simple -p x a.py")
	f.Add("moat run --allow-domain=crates.io -- cargo test")
	f.Fuzz(func(t *testing.T, cmd string) {
		out, err := substitute(cmd, standIns{NpmRegistry: "127.0.0.2:1", Wheels: "/w"})
		if err != nil {
			return
		}
		for _, h := range realHosts {
			if strings.Contains(strings.ToLower(out), h) {
				t.Fatalf("substitute(%q) = %q still names %s", cmd, out, h)
			}
		}
	})
}
