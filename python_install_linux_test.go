package moat

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/venv"
)

// The install sandbox's proxy lets through only the index's hosts: a
// request for another host is refused by the policy (403), one for an
// index host is let through to the dial (which fails here, offline, with
// another status); with no hosts there is no proxy at all. Writes land in
// the venv and the build cache and nowhere else.
func TestInstallSandboxPolicy(t *testing.T) {
	for _, tool := range []string{"/usr/bin/curl", "/bin/sh"} {
		if _, err := os.Stat(tool); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
	}
	outside := t.TempDir()
	probe := `for h in pypi.org example.com; do printf '%s=' $h; curl -s -o /dev/null -w '%{http_code}\n' -m 20 -x "$HTTP_PROXY" http://$h/simple/ || echo none; done
echo v > "$1/in-venv" && echo venv-ok; echo c > "$2/in-cache" && echo cache-ok; echo o > "$3/outside" 2>/dev/null || echo outside-refused
echo proxy="${HTTP_PROXY:-none}"`
	for _, tc := range []struct {
		name  string
		hosts []string
		want  []string
	}{
		{"the default index", venv.DefaultIndexHosts, []string{"example.com=403", "venv-ok", "cache-ok", "outside-refused"}},
		{"no index", nil, []string{"pypi.org=000", "example.com=000", "proxy=none", "venv-ok", "cache-ok", "outside-refused"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, cache := t.TempDir(), t.TempDir()
			var out bytes.Buffer
			err := installVenv(context.Background(), venv.Job{
				Venv: v, Cache: cache, Interpreter: "/usr/bin/python3", Hosts: tc.hosts,
				Steps:  [][]string{{"/bin/sh", "-c", probe, "sh", v, cache, outside}},
				Stdout: &out, Stderr: &out,
			})
			if err != nil {
				t.Fatalf("%v: %s", err, out.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Fatalf("want %q in:\n%s", w, out.String())
				}
			}
			if len(tc.hosts) > 0 && strings.Contains(out.String(), "pypi.org=403") {
				t.Fatalf("the index host was refused by the policy:\n%s", out.String())
			}
			t.Logf("%s", out.String())
			if _, err := os.Lstat(filepath.Join(outside, "outside")); err == nil {
				t.Fatal("the install sandbox wrote outside the venv and its cache")
			}
		})
	}
}
