package moat

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/moat-sandbox/moat/internal/hostview"
)

// The scan finds unnamed credential files in curated directories, and
// only there, within its bounds; executables and code are left alone.
func TestScanCuratedCredentials(t *testing.T) {
	home := t.TempDir()
	write := func(rel string, mode os.FileMode) string {
		p := filepath.Join(home, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	want := []string{
		write(".cargo/registry-token", 0o600),
		write(".sbt/1.0/private/credentials", 0o600),
		write(".local/share/jupyter/other/server-secret.json", 0o600),
		write(".julia/servers/pkg.example/auth.toml", 0o600),
		write(".cache/huggingface/hf_token.txt", 0o600),
	}
	notWant := []string{
		write(".cargo/bin/gh-token", 0o755),                         // a program
		write(".cargo/registry/src/x/token.rs", 0o644),              // code, in a skipped tree
		write(".local/lib/python3/site-packages/x/token", 0o644),    // a skipped root
		write(".cache/huggingface/hub/m/special_tokens_map", 0o644), // model data
		write(".moat-not-curated/token", 0o600),                     // not curated: the home rule covers it
		write(".cargo/a/b/c/d/token", 0o600),                        // deeper than the bound
		write(".cargo/config-neutral.toml", 0o644),
	}
	got := hostview.CuratedCredentials(home, toolchainHomePaths)
	for _, p := range want {
		if !slices.Contains(got, p) {
			t.Errorf("%s not found; scan found %q", p, got)
		}
	}
	for _, p := range notWant {
		if slices.Contains(got, p) {
			t.Errorf("%s should be left alone", p)
		}
	}
	// ProtectedPaths includes them with ProtectCredentials, not without.
	all := IsolationDefault.Security().ProtectedPaths(home)
	if !slices.Contains(all, want[0]) {
		t.Errorf("ProtectedPaths lacks the scanned %s", want[0])
	}
	if slices.Contains(SecurityConfig{ProtectCloudConfig: true}.ProtectedPaths(home), want[0]) {
		t.Errorf("the scan ran without ProtectCredentials")
	}
}

// Every credential file the issue names is on the lists.
func TestCuratedCredentialsListed(t *testing.T) {
	home := "/home/u"
	all := IsolationStrict.Security().ProtectedPaths(home)
	for _, rel := range []string{
		".cache/huggingface/token", ".cache/huggingface/stored_tokens", ".huggingface/token",
		".ivy2/.credentials", ".sbt/.credentials", ".sbt/1.0/credentials", ".config/pip/pip.conf", ".pip/pip.conf",
		".local/share/jupyter/runtime", ".cargo/config.toml", ".cargo/config", ".cargo/credentials.toml",
		".gradle/gradle.properties", ".m2/settings-security.xml", ".m2/settings.xml", ".config/hub",
		".config/gh", ".terraform.d/credentials.tfrc.json", ".config/rclone", ".pgpass", ".my.cnf",
		".config/containers/auth.json", ".docker/config.json", ".condarc", ".config/pypoetry/auth.toml",
		".config/composer/auth.json", ".composer/auth.json", ".gem/credentials", ".npmrc", ".yarnrc",
		".yarnrc.yml", ".netrc", ".git-credentials", ".config/git/credentials", ".local/share/keyrings",
		".nuget/NuGet/NuGet.Config", ".pypirc", ".config/gcloud", ".azure", ".aws", ".kube", ".config/op",
		".vault-token", ".bundle/config", ".config/uv/uv.toml",
	} {
		if !slices.Contains(all, filepath.Join(home, rel)) {
			t.Errorf("%s is not protected", rel)
		}
	}
}
