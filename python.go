package moat

import (
	"path/filepath"
	"strconv"

	"github.com/moat-sandbox/moat/internal/venv"
)

// VenvBackend is the tool that builds a venv. The zero value is
// [VenvAuto].
type VenvBackend int

const (
	// VenvAuto uses uv when it is on the host's PATH, and the
	// interpreter's venv module with pip otherwise.
	VenvAuto VenvBackend = iota
	// VenvUV uses uv; Create fails when uv is not installed.
	VenvUV
	// VenvPython uses the interpreter's venv module and the venv's pip.
	VenvPython
)

// String returns "auto", "uv" or "python".
func (b VenvBackend) String() string { return venv.Backend(b).String() }

// VenvConfig describes a Python virtual environment that [VenvManager]
// builds. The zero value is a venv with no packages, from the host's
// python3, in the manager's cache.
type VenvConfig struct {
	// Path is the venv's directory. Empty means the manager's cache: one
	// venv per interpreter, package set and system site-packages switch,
	// reused by every later Create that asks for the same.
	Path string
	// Packages are pip requirement specifiers ("numpy", "pandas>=2").
	// Nil installs nothing.
	Packages []string
	// Python is the base interpreter, a name looked up on the host's PATH
	// or a path. Empty means python3.
	Python string
	// SystemSitePackages lets the venv see the interpreter's own
	// site-packages (python -m venv --system-site-packages), which is how
	// a distribution's compiled packages (Debian's python3-numpy) are
	// reached. False, the zero value, isolates the venv.
	SystemSitePackages bool
	// Backend is the tool that builds it. The zero value is [VenvAuto].
	Backend VenvBackend
	// IndexURL replaces pip's default index (--index-url). Empty keeps it.
	IndexURL string
	// FindLinks are local directories or URLs of distributions
	// (--find-links). Nil means none.
	FindLinks []string
	// NoIndex installs from FindLinks only (--no-index). False uses the
	// index.
	NoIndex bool
	// Mutable says the venv will be used with
	// [PythonConfig.AllowPipInstall]: a cached venv (Path empty) is then
	// one of its own, never the one read-only sandboxes reuse, so code
	// allowed to change it cannot change theirs. False shares the cache.
	Mutable bool
}

// VenvProgress is one step of [VenvManager.Create]. The zero value means
// nothing.
type VenvProgress struct {
	// Phase is "reuse", "create", "install" or "done".
	Phase string
	// Message is a line for a person: the step, or a line of pip's output.
	Message string
	// Done and Total count the requested packages the installer has
	// reached; Total is 0 outside the install phase.
	Done, Total int
}

// VenvManager builds venvs for sandboxes. The host makes a new venv with
// the trusted base interpreter only, isolated (-I, from "/", with an
// allow-list environment), and without pip; pip and the packages are
// installed in a sandbox of their own, whose only writable places are the
// venv and a build cache and whose network reaches only the package
// index. Nothing inside a venv ever runs on the host. The manifest that
// lets a later Create reuse a venv, and the build cache, are kept in the
// cache directory, outside the venv, written by the host after the install
// sandbox has exited and what it installed was checked. The zero value
// (and a nil *VenvManager) keeps its cache under the user's cache
// directory and reports no progress. Its methods are safe for concurrent
// use; Creates of one venv, in any process, take turns (on Unix), so the
// later ones reuse it.
type VenvManager struct {
	// CacheDir holds the venvs of VenvConfigs without a Path, and the
	// manifests and build caches of every venv. It must be a place no
	// sandbox can write. Empty means moat/venvs under [os.UserCacheDir].
	CacheDir string
	// Progress, when not nil, is called for each step of Create.
	Progress func(VenvProgress)
}

// Venv is a venv that exists. The zero value is not valid.
type Venv struct {
	// Path is the venv's directory, absolute, links resolved.
	Path string
	// Python is its interpreter, Path/bin/python.
	Python string
	// Reused is true when Create found it already matching and ran
	// nothing.
	Reused bool
}

// PythonConfig runs Python in the sandbox with a venv built beforehand.
// The zero value uses no venv: python3 from the sandbox's PATH, with
// MPLBACKEND=Agg.
type PythonConfig struct {
	// Venv is the directory of a venv that exists on the host, such as
	// [VenvManager.Create] makes. It must lie outside the working
	// directory. Inside the sandbox it is readable and executable, never
	// writable (unless AllowPipInstall), and so is the base interpreter's
	// installation. Empty means no venv.
	Venv string
	// AllowPipInstall makes the venv's site-packages and bin/ writable,
	// and executable, so pip (or code) may install into it; installing
	// from an index also needs a network policy that allows it. It gives
	// up write-xor-execute there, and what the sandbox installs stays in
	// the venv after it. False, the zero value, keeps the venv read and
	// execute only.
	AllowPipInstall bool
}

// DataSciencePackages are the packages of [PythonDataScience].
var DataSciencePackages = []string{"numpy", "pandas", "matplotlib", "scikit-learn"}

// validate checks what can be checked of p without I/O: a venv path is
// absolute and clean. A nil p passes.
func (p *PythonConfig) validate() error {
	if p == nil || p.Venv == "" {
		return nil
	}
	if !filepath.IsAbs(p.Venv) || filepath.Clean(p.Venv) != p.Venv {
		return &ConfigError{Field: "python venv", Value: strconv.Quote(p.Venv), Problem: "path must be absolute and clean"}
	}
	return nil
}
