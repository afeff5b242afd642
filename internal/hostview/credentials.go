package hostview

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The curated toolchain directories of default isolation level (~/.cargo,
// ~/.cache/huggingface, ~/.sbt, ...) are readable as whole trees, and a
// credential file that the fixed lists do not name would be readable with
// them. So, besides the lists, every curated directory of a home is
// scanned when a sandbox is built, a few levels deep, for entries whose
// names say they hold a secret (see CredentialName); each one found is
// protected like a listed path. The scan is bounded, so that a huge cache
// does not slow every start: it reads at most scanDirEntries names of a
// directory and scanBudget names per home, descends scanDepth levels below
// each curated directory, and skips package and build trees (scanSkipDirs),
// whose file names are code, not configuration. A secret beyond those
// bounds, or under a name that says nothing, is not found: name it in a
// list, or keep it out of the curated directories.
const (
	scanDepth      = 3
	scanDirEntries = 512
	scanRootBudget = 1024
	scanBudget     = 8192
)

// scanSkipRoots are curated directories that are content-addressed caches
// or installed programs, whose names are hashes and code: not scanned.
var scanSkipRoots = map[string]bool{
	".local/bin": true, ".local/lib": true, ".local/include": true, ".local/share/man": true,
	".cache/pip": true, ".cache/uv": true, ".cache/go-build": true, ".cache/golangci-lint": true,
	".cache/yarn": true, ".cache/pnpm": true, ".cache/node-gyp": true, ".cache/typescript": true,
	".cache/deno": true, ".cache/bazel": true, ".cache/ccache": true, ".cache/sccache": true,
	".cache/torch": true, ".cache/ms-playwright": true, ".cache/cypress": true,
	".cache/coursier": true, ".cache/JNA": true, ".cache/zig": true, ".cache/nvidia": true,
	".cache/pre-commit": true, ".cache/rebar3": true, ".local/share/pnpm": true,
}

// scanSkipDirs are directory names under a curated directory that hold
// packages, sources, builds or models rather than configuration: where
// names like token.py or special_tokens_map.json are code and data.
var scanSkipDirs = map[string]bool{
	"bin": true, "lib": true, "lib64": true, "include": true, "src": true, "share": true,
	"site-packages": true, "dist-packages": true, "node_modules": true, "registry": true,
	"git": true, "pkg": true, "mod": true, "toolchains": true, "versions": true,
	"repository": true, "_cacache": true, "hub": true, "datasets": true, "modules": true,
	"caches": true, "wrapper": true, "downloads": true, "checkpoints": true, "envs": true,
	"pkgs": true, "candidates": true, "man": true, "target": true, "build": true,
}

// codeExts are file extensions of code, libraries, archives and docs: a
// file named token.rs or credentials.py is a program, not a secret.
var codeExts = map[string]bool{
	".py": true, ".pyc": true, ".pyi": true, ".pyo": true, ".pyx": true, ".rs": true, ".go": true,
	".js": true, ".mjs": true, ".cjs": true, ".ts": true, ".tsx": true, ".jsx": true, ".d": true,
	".java": true, ".class": true, ".jar": true, ".kt": true, ".scala": true, ".rb": true,
	".c": true, ".h": true, ".cc": true, ".cpp": true, ".hpp": true, ".cs": true, ".swift": true,
	".so": true, ".a": true, ".o": true, ".dll": true, ".dylib": true, ".rlib": true, ".rmeta": true,
	".html": true, ".htm": true, ".css": true, ".md": true, ".rst": true, ".map": true,
	".whl": true, ".gz": true, ".tgz": true, ".zip": true, ".tar": true, ".xz": true, ".bz2": true,
	".zst": true, ".pt": true, ".bin": true, ".safetensors": true, ".lock": true,
}

// secretNames are whole file or directory names that hold credentials.
var secretNames = map[string]bool{
	"token": true, "tokens": true, "stored_tokens": true, ".credentials": true,
	"credentials": true, "auth.json": true, "auth.toml": true, ".netrc": true, "netrc": true,
	"_netrc": true, ".git-credentials": true, "git-credentials": true, ".pypirc": true,
	".npmrc": true, ".vault-token": true, "hosts.yml": true, "hosts.json": true,
	"id_rsa": true, "id_dsa": true, "id_ecdsa": true, "id_ed25519": true,
	".env": true, ".envrc": true,
}

// secretWords are words of a name (split at anything but letters and
// digits) that say it holds a secret: hf_token, api-credentials.json.
var secretWords = map[string]bool{
	"token": true, "tokens": true, "credential": true, "credentials": true, "creds": true,
	"secret": true, "secrets": true, "password": true, "passwords": true, "passwd": true,
	"apikey": true, "apikeys": true, "privkey": true,
}

// keyExts are extensions of key and key-store files.
var keyExts = map[string]bool{
	".pem": true, ".key": true, ".p12": true, ".pfx": true, ".jks": true, ".keystore": true,
	".kdbx": true, ".ppk": true, ".gpg": true,
}

// CredentialName reports whether a file or directory called name, in a
// curated directory, looks like it holds a credential.
func CredentialName(name string) bool {
	lower := strings.ToLower(name)
	if secretNames[lower] {
		return true
	}
	ext := filepath.Ext(lower)
	if keyExts[ext] {
		return true
	}
	if codeExts[ext] || strings.Contains(lower, "tokens_map") || strings.Contains(lower, "added_tokens") {
		return false
	}
	if secretWords[strings.TrimPrefix(ext, ".")] { // registry.token, db.password
		return true
	}
	words := strings.FieldsFunc(strings.TrimSuffix(lower, ext), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	})
	for _, w := range words {
		if secretWords[w] {
			return true
		}
		// Run-together names: hftoken, authtoken, dbpassword (but not
		// tokenizer, whose secret word is not at its end).
		for _, stem := range secretStems {
			if strings.HasSuffix(w, stem) {
				return true
			}
		}
	}
	return false
}

// secretStems are secret words also caught at the end of a longer word.
var secretStems = []string{"token", "tokens", "secret", "secrets", "password", "passwd", "credentials", "apikey"}

// CuratedCredentials returns the entries of home's curated directories
// (curated, relative to home) that CredentialName flags, in a fixed order,
// within the scan's bounds.
func CuratedCredentials(home string, curated []string) []string {
	budget, rootBudget := scanBudget, 0
	var out []string
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		if budget <= 0 || rootBudget <= 0 {
			return
		}
		f, err := os.Open(dir)
		if err != nil {
			return
		}
		entries, _ := f.ReadDir(min(scanDirEntries, budget, rootBudget))
		f.Close()
		budget -= len(entries)
		rootBudget -= len(entries)
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			t := e.Type()
			if CredentialName(e.Name()) && !executableFile(p, t) {
				out = append(out, p)
				continue
			}
			if t.IsDir() && depth < scanDepth && !scanSkipDirs[strings.ToLower(e.Name())] {
				walk(p, depth+1)
			}
		}
	}
	names := listings{} // most curated entries share a few directories
	scanned := map[string]bool{}
	for _, rel := range curated {
		p := filepath.Join(home, rel)
		t, ok := names.lookupPath(p)
		if !ok || scanSkipRoots[rel] {
			continue
		}
		// A curated entry that is a link (~/.rustup -> ~/dotfiles/rustup)
		// shows what it leads to, so that is scanned too, through the
		// link: what is found is named as the sandbox reaches it, the
		// view protects where it really is as well, and a lifted list
		// still matches the name it gives.
		real := p
		if t&fs.ModeSymlink != 0 {
			r, err := filepath.EvalSymlinks(p)
			if err != nil {
				continue
			}
			if fi, err := os.Stat(r); err != nil || !fi.IsDir() {
				continue
			}
			real, t = r, fs.ModeDir
		}
		if t.IsDir() && !scanned[real] {
			scanned[real] = true
			rootBudget = scanRootBudget
			walk(p, 1)
		}
	}
	return out
}

// executableFile reports a regular file with an execute bit in a bin or
// libexec directory: a program named like a secret (gh-token, a credential
// helper) is left alone there. Elsewhere an execute bit proves nothing.
func executableFile(p string, t fs.FileMode) bool {
	if !t.IsRegular() {
		return false
	}
	if d := filepath.Base(filepath.Dir(p)); d != "bin" && d != "libexec" {
		return false
	}
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&0o111 != 0
}
