package moat

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/moat-sandbox/moat/internal/hostview"
)

// The protection lists, relative to a home directory. Each entry is denied,
// with everything beneath it, when its switch is on. They cover Linux and
// macOS locations alike, since a home directory may be shared or synced.
var (
	credentialPaths = []string{
		".ssh", ".gnupg", ".netrc", ".git-credentials", ".config/git/credentials",
		".config/gh", ".config/hub", ".config/glab-cli",
		".docker/config.json", ".terraform.d/credentials.tfrc.json", ".vault-token",
		".pgpass", ".my.cnf", ".s3cfg", ".boto", ".config/rclone", ".config/op",
		".authinfo", ".authinfo.gpg", "_netrc", ".terraformrc",
		".local/share/jupyter/runtime", ".local/share/jupyter/notebook_secret",
		".config/containers/auth.json",
		".docker/key.pem", ".docker/contexts",
		".mylogin.cnf", ".pg_service.conf", ".cache/git/credential",
		".config/configstore", ".config/github-copilot", ".kaggle", ".config/kaggle", ".databrickscfg",
		".snowsql/config", ".snowflake", ".dbt/profiles.yml", ".config/ngrok", ".ngrok2", ".cloudflared",
		".wrangler", ".tsh", ".op", ".sentryclirc", ".netlify", ".config/netlify", ".vercel",
		".codex/auth.json", ".claude/.credentials.json",
	}
	// packageCredentialPaths are package-registry credentials, including
	// those kept inside the curated toolchain directories of
	// [IsolationDefault]: tokens, and whole configuration files whose
	// index or registry URLs carry passwords. Hiding a whole file costs
	// little: HOME is not the real home in a sandbox, so a tool reads
	// these only when pointed at them, and an explicit grant of the file
	// opens it.
	packageCredentialPaths = []string{
		".npmrc", ".yarnrc", ".yarnrc.yml", ".pypirc",
		".config/pypoetry/auth.toml", ".cargo/credentials", ".cargo/credentials.toml",
		".gem/credentials", ".local/share/gem/credentials", ".composer/auth.json",
		".config/composer/auth.json", ".m2/settings.xml", ".m2/settings-security.xml", ".gradle/gradle.properties",
		".nuget/NuGet/NuGet.Config", ".bundle/config",
		".cache/huggingface/token", ".cache/huggingface/stored_tokens", ".huggingface/token",
		".ivy2/.credentials", ".ivy2/credentials", ".sbt/.credentials", ".sbt/credentials",
		".sbt/0.13/credentials", ".sbt/0.13/.credentials", ".sbt/1.0/credentials", ".sbt/1.0/.credentials",
		".config/pip/pip.conf", ".pip/pip.conf", ".config/uv/uv.toml", ".local/share/uv/credentials",
		".cargo/config", ".cargo/config.toml",
		".condarc", ".mambarc", ".conda/.condarc", ".config/conda", ".continuum", ".local/share/binstar",
		".config/pnpm/rc", ".bunfig.toml", ".config/NuGet/NuGet.Config",
		".config/helm/repositories.yaml", ".config/helm/registry",
	}
	// shellHistoryPaths are shell and REPL histories: typed secrets end
	// up in them.
	shellHistoryPaths = []string{
		".ipython/profile_default/history.sqlite",
		".bash_history", ".zsh_history", ".zhistory", ".histfile", ".sh_history",
		".local/share/fish/fish_history", ".config/fish/fish_history",
		".python_history", ".node_repl_history", ".psql_history", ".mysql_history",
		".sqlite_history", ".irb_history", ".rediscli_history", ".lesshst", ".dbshell",
		// Added with the split (shellHistoryAdded in the tests).
		".julia/logs/repl_history.jl", ".local/share/atuin", ".mongodb/mongosh",
		".config/nushell/history.txt", ".config/nushell/history.sqlite3",
		".Rhistory", ".local/state/lesshst",
	}
	cloudPaths = []string{
		".aws", ".azure", ".config/gcloud", ".kube", ".oci", ".config/doctl",
		".config/hcloud", ".config/linode-cli", ".bluemix", ".aliyun", ".config/openstack",
		".pulumi", ".terraform.d", ".config/scw", ".ovh.conf", ".fly", ".config/exoscale",
	}
	browserPaths = []string{
		".mozilla", ".config/google-chrome", ".config/google-chrome-beta",
		".config/google-chrome-unstable", ".config/chromium", ".config/BraveSoftware",
		".config/microsoft-edge", ".config/vivaldi", ".config/opera", ".pki",
		".var/app/org.mozilla.firefox", ".var/app/com.google.Chrome",
		".var/app/org.chromium.Chromium", ".var/app/com.brave.Browser",
		"snap/firefox", "snap/chromium",
		".cache/mozilla", ".cache/google-chrome", ".cache/chromium", ".cache/BraveSoftware",
		".cache/microsoft-edge", ".cache/vivaldi", ".cache/opera",
		"Library/Application Support/Firefox", "Library/Application Support/Google/Chrome",
		"Library/Application Support/Chromium", "Library/Application Support/BraveSoftware",
		"Library/Application Support/Microsoft Edge", "Library/Safari", "Library/Cookies",
	}
	keychainPaths = []string{
		".local/share/keyrings", ".gnome2/keyrings", ".password-store",
		".local/share/kwalletd", ".kde/share/apps/kwallet", ".kde4/share/apps/kwallet",
		".config/KeePassXC", ".local/share/KeePassXC", "Library/Keychains",
	}
)

// toolchainHomePaths are what [IsolationDefault] lets a sandbox read from
// the user's home: configuration toolchains read and the toolchains and
// package caches installed there. Protections still apply inside them.
var toolchainHomePaths = []string{
	// git and shells
	".gitconfig", ".config/git", ".gitignore_global", ".gitattributes",
	".bashrc", ".bash_profile", ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile",
	".inputrc", ".editorconfig", ".terminfo",
	// user-level installs: programs, user site-packages, tool data; not
	// the rest of ~/.local/share (Trash, recently-used lists, app data)
	".local/bin", ".local/lib", ".local/include", ".local/share/man",
	".local/share/pipx", ".local/share/uv", ".local/share/virtualenv", ".local/share/virtualenvs",
	".local/share/pnpm", ".local/share/jupyter", ".local/share/mamba",
	// package and build caches and their configuration; not the rest of
	// ~/.cache (browser caches, thumbnails of documents)
	".cache/pip", ".cache/uv", ".cache/pypoetry", ".cache/pipenv", ".cache/pre-commit",
	".cache/go-build", ".cache/golangci-lint", ".cache/yarn", ".cache/pnpm", ".cache/node-gyp",
	".cache/typescript", ".cache/deno", ".cache/bazel", ".cache/ccache", ".cache/sccache",
	".cache/huggingface", ".cache/torch", ".cache/ms-playwright", ".cache/cypress", ".cache/coursier",
	".cache/JNA", ".cache/rebar3", ".cache/zig", ".cache/nvidia",
	".npm", ".yarn", ".config/pip", ".pip", ".config/uv", ".condarc",
	".m2", ".gradle", ".ivy2", ".sbt", ".nuget",
	// language toolchains under the home
	".rustup", ".cargo", "go", "sdk", ".nvm", ".volta", ".fnm", ".bun", ".deno",
	".pyenv", ".rbenv", ".rvm", ".gem", ".sdkman", ".jenv", ".ghcup", ".cabal",
	".stack", ".opam", ".julia", ".nimble", ".dotnet", ".elan",
	"miniconda3", "anaconda3", "miniforge3", ".conda",
}

// ProtectedPathsOfAllHomes returns ProtectedPaths for every home directory
// whose secrets moat protects: the user's own (as $HOME and the password
// database give it), root's, and each one under /home, in that order. A
// zero SecurityConfig has every protection off, so it returns only what the
// curated scan finds with its switches off: nothing.
func (s SecurityConfig) ProtectedPathsOfAllHomes() []string {
	var out []string
	for _, h := range hostview.AllHomes(hostview.OwnHome()) {
		out = append(out, s.ProtectedPaths(h)...)
	}
	return out
}

// ProtectedPaths returns the absolute paths under home that s protects,
// in a fixed order: the lists of this file, then, with ProtectCredentials
// or ProtectPackageCredentials, the entries of home's curated toolchain
// directories whose names say they hold a credential (a bounded scan of
// the file system; see hostview.CuratedCredentials), except one that a
// list whose switch is off names, or lies under: lifting a switch opens
// what its list names. ProtectUserHome, AllowTCCPrompts and the device
// switches add none: they decide what is exposed, not what is hidden.
func (s SecurityConfig) ProtectedPaths(home string) []string {
	var lists, lifted [][]string
	pick := func(on bool, l []string) {
		if on {
			lists = append(lists, l)
		} else {
			lifted = append(lifted, l)
		}
	}
	pick(s.ProtectCredentials, credentialPaths)
	pick(s.ProtectShellHistory, shellHistoryPaths)
	pick(s.ProtectPackageCredentials, packageCredentialPaths)
	if s.ProtectCloudConfig {
		lists = append(lists, cloudPaths)
	}
	if s.ProtectBrowserData {
		lists = append(lists, browserPaths)
	}
	if s.ProtectKeychains {
		lists = append(lists, keychainPaths)
	}
	var out []string
	for _, l := range lists {
		for _, rel := range l {
			out = append(out, filepath.Join(home, rel))
		}
	}
	if s.ProtectCredentials || s.ProtectPackageCredentials {
		for _, p := range hostview.CuratedCredentials(home, toolchainHomePaths) {
			if !slices.Contains(out, p) && !listedUnder(p, home, lifted) {
				out = append(out, p)
			}
		}
	}
	return out
}

// listedUnder reports whether p is, or lies under, an entry of lists
// (relative to home).
func listedUnder(p, home string, lists [][]string) bool {
	for _, l := range lists {
		for _, rel := range l {
			q := filepath.Join(home, rel)
			if p == q || strings.HasPrefix(p, q+string(filepath.Separator)) {
				return true
			}
		}
	}
	return false
}

// ToolchainPaths returns the absolute paths under home that
// [IsolationDefault] makes readable when ProtectUserHome is on.
func ToolchainPaths(home string) []string {
	out := make([]string, len(toolchainHomePaths))
	for i, rel := range toolchainHomePaths {
		out[i] = filepath.Join(home, rel)
	}
	return out
}
