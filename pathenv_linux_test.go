package moat_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// The tools on the host's PATH resolve inside a default-level sandbox to
// the same files as on the host: toolchains in /usr/local, under the home
// (rustup's cargo, pyenv's shims, which need PYENV_ROOT) and the system's.
// Each one found on the host must also run inside.
func TestPathResolvesLikeHost(t *testing.T) {
	sb := newSandbox(t, moat.Config{Isolation: moat.IsolationDefault})
	found := 0
	for _, tool := range []struct{ name, version string }{
		{"go", "version"}, {"python3", "--version"}, {"node", "--version"}, {"cargo", "--version"}, {"sh", ""},
	} {
		host, err := exec.LookPath(tool.name)
		if err != nil {
			continue
		}
		found++
		out, err := sb.Command("sh", "-c", "command -v "+tool.name).Output()
		inside := strings.TrimSpace(string(out))
		if err != nil || inside != host {
			t.Errorf("%s: inside %q (%v), on the host %q", tool.name, inside, err, host)
			continue
		}
		if tool.version == "" {
			continue
		}
		if out, err := sb.Command(filepath.Base(host), tool.version).CombinedOutput(); err != nil {
			t.Errorf("%s %s does not run inside: %v: %s", tool.name, tool.version, err, out)
		}
	}
	if found == 0 {
		t.Fatal("none of the probed tools is on the host's PATH")
	}
}
