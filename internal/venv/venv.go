// Package venv builds Python virtual environments. The base venv is made
// on the host by the trusted interpreter, isolated (-I, from a neutral
// directory, with an allow-list environment), without pip; pip is seeded
// and packages are installed by an [Installer], a sandbox of their own
// whose only writable place is the venv and a build cache. The host then
// checks, by reading the venv's metadata names as hostile data, that what
// was asked for is there, and only then records the request in a manifest
// outside the venv, so that a later Create of the same request reuses the
// venv without running anything. Nothing inside a venv ever runs on the
// host.
//
// It uses uv when present and the interpreter's own venv module plus pip
// otherwise, and reports progress through a callback. It imports nothing
// of moat's; moat's VenvManager wraps it and supplies the Installer.
package venv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Backend says which tool creates the venv and installs its packages. The
// zero value is [Auto].
type Backend int

const (
	// Auto uses uv when it is on PATH and Python's venv module with pip
	// otherwise.
	Auto Backend = iota
	// UV uses uv, and fails when it is not installed.
	UV
	// Python uses the interpreter's venv module and the venv's pip.
	Python
)

// String returns "auto", "uv" or "python".
func (b Backend) String() string {
	switch b {
	case UV:
		return "uv"
	case Python:
		return "python"
	}
	return "auto"
}

// ParseBackend parses "auto", "uv" or "python"; "" is auto.
func ParseBackend(s string) (Backend, error) {
	switch s {
	case "", "auto":
		return Auto, nil
	case "uv":
		return UV, nil
	case "python":
		return Python, nil
	}
	return Auto, fmt.Errorf("want auto, uv or python")
}

// Index is where packages come from. The zero value is pip's (or uv's)
// own default index.
type Index struct {
	// URL replaces the default index (--index-url); "" keeps it.
	URL string
	// FindLinks adds local directories or URLs of distributions
	// (--find-links); nil adds none.
	FindLinks []string
	// NoIndex uses no index at all, only FindLinks (--no-index); false
	// uses the index.
	NoIndex bool
}

// Event is one step of progress. The zero value means nothing.
type Event struct {
	// Phase is "reuse", "create", "install" or "done".
	Phase string
	// Message is a line for a person: the step, or a line of pip's output.
	Message string
	// Done and Total count packages seen by the installer of those asked
	// for; Total is 0 outside the install phase.
	Done, Total int
}

// Spec is what to build. The zero value is not valid: Path is required.
type Spec struct {
	// Path is the venv's directory. Required.
	Path string
	// Packages are requirement specifiers for pip ("numpy", "pandas>=2");
	// nil installs nothing.
	Packages []string
	// Python is the interpreter, a name looked up on PATH or a path; ""
	// means python3.
	Python string
	// SystemSitePackages lets the venv see the interpreter's own
	// site-packages (--system-site-packages); false isolates it.
	SystemSitePackages bool
	// Backend chooses the tool; the zero value is [Auto].
	Backend Backend
	// Index is where packages come from; the zero value is the default
	// index.
	Index Index
	// Progress, when not nil, is called for each step, from the calling
	// goroutine.
	Progress func(Event)
	// LookPath finds programs on the host; nil means exec.LookPath.
	LookPath func(string) (string, error)
	// Manifest is the file, outside the venv and anywhere a sandbox can
	// write, where Create records what it built. Required.
	Manifest string
	// BuildCache is the install's own cache directory, outside the venv,
	// made (0700) when missing. Required when anything is installed.
	BuildCache string
	// Install runs the install steps in a sandbox of their own. Nil makes
	// Create refuse to seed pip or install packages.
	Install Installer
}

// Env is a venv that exists. The zero value is not valid.
type Env struct {
	// Path is the venv's directory, absolute and with links resolved.
	Path string
	// Python is the venv's interpreter, Path/bin/python.
	Python string
	// Interpreter is the real path of the base interpreter the venv's
	// bin/python leads to.
	Interpreter string
	// Prefix is the base interpreter's installation prefix: the directory
	// above pyvenv.cfg's home (the base interpreter's bin/), or, without
	// one, above the directory bin/python leads to.
	Prefix string
	// SitePackages are the venv's own site-packages directories.
	SitePackages []string
	// Reused is true when Create found the venv already matching and did
	// no work.
	Reused bool
}

// Create builds the venv that s describes, or reuses it when its manifest
// says the interpreter, the package set and the system site-packages
// switch already match, in which case it runs nothing.
//
// On the host it runs only the trusted base interpreter (or uv), isolated,
// to make a new venv without pip; it never runs anything inside a venv.
// Seeding pip and installing packages are a [Job] for s.Install.
//
// Creates of one venv must take turns (moat's VenvManager holds a lock).
// A Create that fails or whose ctx is cancelled undoes the venv it made; one
// killed outright leaves a build record beside the manifest, and the next
// Create removes what it made before looking at the path, so a venv is
// reused only once a build of it completed.
func Create(ctx context.Context, s Spec) (*Env, error) {
	if s.Path == "" {
		return nil, errors.New("venv: no path")
	}
	if s.Manifest == "" {
		return nil, errors.New("venv: no manifest path")
	}
	for _, p := range s.Packages {
		if err := CheckPackage(p); err != nil {
			return nil, fmt.Errorf("venv: package %q: %v", p, err)
		}
	}
	if err := CheckIndex(s.Index); err != nil {
		return nil, fmt.Errorf("venv: %v", err)
	}
	look := s.LookPath
	if look == nil {
		look = exec.LookPath
	}
	interp, err := Interpreter(s.Python, look)
	if err != nil {
		return nil, err
	}
	path, err := filepath.Abs(s.Path)
	if err != nil {
		return nil, fmt.Errorf("venv %q: %v", s.Path, err)
	}
	want := Manifest{Format: manifestFormat, Interpreter: interp, Packages: PackageSet(s.Packages), SystemSitePackages: s.SystemSitePackages}
	progress := func(e Event) {
		if s.Progress != nil {
			s.Progress(e)
		}
	}

	// A build record left here means a Create of this venv was killed:
	// undo what it made before anything looks at the path (building.go).
	if what, err := sweepKilledBuild(path, s.Manifest); err != nil {
		return nil, err
	} else if what != "" {
		progress(Event{Phase: "create", Message: what})
	}

	_, statErr := os.Lstat(path)
	existed := statErr == nil
	exists, err := checkTarget(path, want, s.Manifest)
	if err != nil {
		return nil, err
	}
	if exists {
		if m, err := ReadManifest(s.Manifest); err == nil && m.Equal(want) {
			env, err := Open(path)
			if err != nil {
				return nil, err
			}
			env.Reused = true
			progress(Event{Phase: "reuse", Message: "reusing " + env.Path})
			return env, nil
		}
	}
	uv, err := chooseBackend(s.Backend, look)
	if err != nil {
		return nil, err
	}
	if err := writeBuildRecord(s.Manifest, buildRecord{Path: path, Made: !exists, Existed: existed, Pid: os.Getpid()}); err != nil {
		return nil, err
	}
	if !exists {
		progress(Event{Phase: "create", Message: "creating " + path})
		// Made without system site-packages, so that the seeded pip is the
		// venv's own, not the system's; the install sandbox switches them
		// on after seeding (as python -m venv does, CPython issue 24875).
		argv := CreateCommand(uv, interp, path, false)
		if out, err := runHost(ctx, argv, uvEnv(uv, s.BuildCache)...); err != nil {
			undoCreate(path, existed)
			removeBuildRecord(s.Manifest)
			return nil, fmt.Errorf("venv %q: creating it with %s failed: %s", path, filepath.Base(argv[0]), out)
		}
	}
	env, err := Open(path)
	if err == nil {
		err = install(ctx, s, env, uv, interp, want.Packages, !exists, progress)
	}
	if err == nil {
		err = checkSystemSite(path, s.SystemSitePackages)
	}
	if err != nil {
		if !exists {
			undoCreate(path, existed)
		}
		removeBuildRecord(s.Manifest)
		return nil, err
	}
	if err := WriteManifest(s.Manifest, want); err != nil {
		return nil, err
	}
	removeBuildRecord(s.Manifest)
	progress(Event{Phase: "done", Message: "ready " + path})
	return env, nil
}

// undoCreate removes a venv Create made but could not finish, so that a
// failed Create leaves nothing behind: the directory when Create made it,
// its contents when it was an empty directory already.
func undoCreate(path string, existed bool) {
	if !existed {
		os.RemoveAll(path)
		return
	}
	entries, _ := os.ReadDir(path)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(path, e.Name()))
	}
}

// install seeds pip into env when it has none and installs packages, in
// s.Install's sandbox, then checks on the host that they are there.
func install(ctx context.Context, s Spec, env *Env, uv, interp string, packages []string, fresh bool, progress func(Event)) error {
	var steps [][]string
	if !hasPip(env) {
		progress(Event{Phase: "create", Message: "installing pip into " + env.Path})
		steps = append(steps, SeedCommand(env.Python))
	}
	if fresh && s.SystemSitePackages {
		steps = append(steps, SystemSiteCommand(env.Python, env.Path))
	}
	if len(packages) > 0 {
		steps = append(steps, InstallCommand(uv, env.Python, s.Index, packages, s.BuildCache))
	}
	if len(steps) == 0 {
		return nil
	}
	if s.Install == nil {
		return fmt.Errorf("venv %q: no install sandbox; moat installs packages only in a sandbox of their own", env.Path)
	}
	if s.BuildCache == "" || !filepath.IsAbs(s.BuildCache) {
		return fmt.Errorf("venv %q: no build cache", env.Path)
	}
	if err := os.MkdirAll(s.BuildCache, 0o700); err != nil {
		return fmt.Errorf("venv build cache %q: %v", s.BuildCache, bare(err))
	}
	total := len(packages)
	if total > 0 {
		progress(Event{Phase: "install", Message: "installing " + strings.Join(packages, " "), Total: total})
	}
	done := 0
	line := func(l string) {
		if strings.HasPrefix(l, "Collecting ") || strings.HasPrefix(l, "Requirement already satisfied") {
			if done < total {
				done++
			}
		}
		progress(Event{Phase: "install", Message: l, Done: done, Total: total})
	}
	var stdout lineWriter
	stdout.line = line
	var stderr tailBuffer
	job := Job{
		Venv: env.Path, Cache: s.BuildCache, Interpreter: interp,
		Read: indexPaths(s.Index), Hosts: indexHosts(s.Index), Env: uvEnv(uv, s.BuildCache),
		Steps: steps, Stdout: &stdout, Stderr: &stderr,
	}
	if uv != "" {
		job.Exec = []string{uv}
	}
	err := s.Install(ctx, job)
	stdout.flush()
	if err != nil {
		what := "installing " + strings.Join(packages, " ")
		if len(packages) == 0 {
			what = "installing pip"
		}
		return fmt.Errorf("venv %q: %s failed: %s", env.Path, what, Gist(stderr.String(), stdout.tail, err))
	}
	var system []string
	if s.SystemSitePackages && len(packages) > 0 {
		if system, err = systemSitePackages(ctx, interp); err != nil {
			return fmt.Errorf("venv %q: asking %s for its site-packages: %v", env.Path, interp, err)
		}
	}
	site, err := sitePackagesOf(env.Path)
	if err == nil {
		err = checkInstalled(site, system, packages)
	}
	if err != nil {
		return fmt.Errorf("venv %q: %v", env.Path, err)
	}
	return nil
}

// hasPip reports whether the venv has pip in a site-packages directory,
// by name only.
func hasPip(env *Env) bool {
	for _, sp := range env.SitePackages {
		if fi, err := os.Lstat(filepath.Join(sp, "pip")); err == nil && fi.IsDir() {
			return true
		}
	}
	return false
}

// uvEnv is what uv gets besides the allow-list: its cache, the build
// cache; nothing when uv is not used.
func uvEnv(uv, cache string) []string {
	if uv == "" || cache == "" {
		return nil
	}
	return []string{"UV_CACHE_DIR=" + cache}
}

// indexPaths are the local places the index options name: --find-links
// directories and a file: index URL, those that exist.
func indexPaths(idx Index) []string {
	var out []string
	add := func(p string) {
		if filepath.IsAbs(p) {
			if _, err := os.Stat(p); err == nil {
				out = append(out, filepath.Clean(p))
			}
		}
	}
	for _, l := range idx.FindLinks {
		if u, err := url.Parse(l); err == nil && u.Scheme == "file" {
			add(u.Path)
		} else if !strings.Contains(l, "://") {
			add(l)
		}
	}
	if u, err := url.Parse(idx.URL); err == nil && u.Scheme == "file" {
		add(u.Path)
	}
	return out
}

// indexHosts are the hosts the install may reach: the index's (PyPI's by
// default, none with NoIndex) and those of --find-links URLs.
func indexHosts(idx Index) []string {
	var out []string
	add := func(raw string) {
		if u, err := url.Parse(raw); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Hostname() != "" {
			if !slices.Contains(out, u.Hostname()) {
				out = append(out, u.Hostname())
			}
		}
	}
	switch {
	case idx.NoIndex:
	case idx.URL != "":
		add(idx.URL)
	default:
		out = append(out, DefaultIndexHosts...)
	}
	for _, l := range idx.FindLinks {
		add(l)
	}
	return out
}

// checkTarget says whether path already holds a venv Create may use: false
// for a missing path or an empty directory, true for a venv whose system
// site-packages switch matches; anything else is an error.
func checkTarget(path string, want Manifest, manifest string) (bool, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("venv %q: %v", path, bare(err))
	}
	if !fi.IsDir() {
		return false, fmt.Errorf("venv %q: not a directory", path)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return false, fmt.Errorf("venv %q: %v", path, bare(err))
	}
	if len(entries) == 0 {
		return false, nil
	}
	cfg, err := readPyvenvCfg(path)
	if err != nil {
		return false, err
	}
	if ssp := strings.EqualFold(cfg["include-system-site-packages"], "true"); ssp != want.SystemSitePackages {
		return false, fmt.Errorf("venv %q: made %s system site-packages, asked %s; remove it or use another path", path, with(ssp), with(want.SystemSitePackages))
	}
	if m, err := ReadManifest(manifest); err == nil && m.Interpreter != want.Interpreter {
		return false, fmt.Errorf("venv %q: made with the interpreter %s, not %s; remove it or use another path", path, m.Interpreter, want.Interpreter)
	}
	return true, nil
}

func with(b bool) string {
	if b {
		return "with"
	}
	return "without"
}

// Open checks that path is a venv (a pyvenv.cfg and bin/python) and
// describes it.
func Open(path string) (*Env, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("venv %q: %v", path, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("venv %q: %v", path, bare(err))
	}
	cfg, err := readPyvenvCfg(real)
	if err != nil {
		return nil, err
	}
	py := filepath.Join(real, "bin", "python")
	target, err := filepath.EvalSymlinks(py)
	if err != nil {
		return nil, fmt.Errorf("venv %q: not a venv: no usable bin/python (%v)", path, bare(err))
	}
	fi, err := os.Stat(target)
	if err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return nil, fmt.Errorf("venv %q: not a venv: bin/python is not an executable file", path)
	}
	// The prefix (which moat opens read and execute to the code's
	// sandbox) comes from pyvenv.cfg's home, which the host's venv module
	// wrote and which stays read-only even with AllowPipInstall (at the
	// strict and default levels), not from the bin/python link, which
	// AllowPipInstall makes writable: a repointed link must not open
	// another directory.
	prefix := filepath.Dir(filepath.Dir(target))
	if h := cfg["home"]; filepath.IsAbs(h) {
		prefix = filepath.Dir(filepath.Clean(h))
	}
	env := &Env{Path: real, Python: py, Interpreter: target, Prefix: prefix}
	sp, _ := filepath.Glob(filepath.Join(real, "lib", "python*", "site-packages"))
	for _, d := range sp {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			env.SitePackages = append(env.SitePackages, d)
		}
	}
	sort.Strings(env.SitePackages)
	return env, nil
}

// maxPyvenvCfg bounds what readPyvenvCfg reads: a venv's pyvenv.cfg is a
// few lines, and a sandbox may have written it.
const maxPyvenvCfg = 64 << 10

// readPyvenvCfg reads dir/pyvenv.cfg, the file that makes a venv, as
// hostile data: a regular file, at most maxPyvenvCfg bytes.
func readPyvenvCfg(dir string) (map[string]string, error) {
	f, err := os.OpenFile(filepath.Join(dir, "pyvenv.cfg"), os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return nil, fmt.Errorf("venv %q: not a venv: no pyvenv.cfg", dir)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("venv %q: not a venv: pyvenv.cfg is not a regular file", dir)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxPyvenvCfg+1))
	if err != nil {
		return nil, fmt.Errorf("venv %q: pyvenv.cfg: %v", dir, bare(err))
	}
	if len(data) > maxPyvenvCfg {
		return nil, fmt.Errorf("venv %q: pyvenv.cfg is larger than %d bytes", dir, maxPyvenvCfg)
	}
	return ParsePyvenvCfg(data), nil
}

// ParsePyvenvCfg parses the key = value lines of a pyvenv.cfg; keys are
// lower-cased, other lines ignored.
func ParsePyvenvCfg(data []byte) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		if k != "" {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// Interpreter finds the base interpreter name ("" is python3) with look and
// returns its real path, links resolved.
func Interpreter(name string, look func(string) (string, error)) (string, error) {
	if name == "" {
		name = "python3"
	}
	p := name
	if !strings.Contains(name, "/") {
		var err error
		if p, err = look(name); err != nil {
			if !errors.Is(err, exec.ErrNotFound) && !errors.Is(err, fs.ErrNotExist) {
				// Found, but refused (a program a sandbox could have
				// written): the caller's look says why.
				return "", fmt.Errorf("python: %w", err)
			}
			return "", fmt.Errorf("python: %s not found on the host's PATH; install Python 3 or name an interpreter (--python)", name)
		}
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("python %q: %v", name, bare(err))
	}
	abs, err := filepath.Abs(real)
	if err != nil {
		return "", fmt.Errorf("python %q: %v", name, err)
	}
	fi, err := os.Stat(abs)
	if err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("python %q: not an executable file", name)
	}
	return abs, nil
}

// chooseBackend says whether uv builds the venv: its path, or "" for the
// interpreter's venv module and pip.
func chooseBackend(b Backend, look func(string) (string, error)) (string, error) {
	switch b {
	case Python:
		return "", nil
	case UV:
		p, err := look("uv")
		if err != nil && !errors.Is(err, exec.ErrNotFound) && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("venv: uv: %w", err)
		}
		if err != nil {
			return "", errors.New("venv: uv was asked for (--venv-backend uv) but is not installed on the host's PATH; install it, or use --venv-backend python")
		}
		return p, nil
	}
	if p, err := look("uv"); err == nil {
		return p, nil
	}
	return "", nil
}

// CreateCommand is the command that creates a venv at path from interp,
// on the host, without pip (which [SeedCommand] installs in the install
// sandbox): uv venv when uv is not "", the interpreter's venv module
// otherwise. The interpreter runs isolated (-I: no current directory or
// script directory on sys.path, no PYTHON* variables, no user site), uv
// with --no-config.
func CreateCommand(uv, interp, path string, systemSite bool) []string {
	var argv []string
	if uv != "" {
		argv = []string{uv, "venv", "--no-config", "--python", interp}
	} else {
		argv = []string{interp, "-I", "-m", "venv", "--without-pip"}
	}
	if systemSite {
		argv = append(argv, "--system-site-packages")
	}
	return append(argv, "--", path)
}

// SeedCommand is the command that installs pip into the venv whose
// interpreter is python, from the interpreter's own bundled wheel,
// offline, even where the system site-packages hold a pip (as python -m
// venv does); it runs in the install sandbox.
func SeedCommand(python string) []string {
	return []string{python, "-I", "-m", "ensurepip", "--upgrade", "--default-pip"}
}

// SystemSiteCommand is the command, run in the install sandbox after
// [SeedCommand], that switches on the system site-packages of the venv
// at path, made without them, by rewriting its pyvenv.cfg.
func SystemSiteCommand(python, path string) []string {
	const code = "import sys\n" +
		"p = sys.argv[1] + '/pyvenv.cfg'\n" +
		"lines = [l for l in open(p).read().splitlines() if l.split('=')[0].strip().lower() != 'include-system-site-packages']\n" +
		"open(p, 'w').write('\\n'.join(lines + ['include-system-site-packages = true']) + '\\n')\n"
	return []string{python, "-I", "-c", code, path}
}

// checkSystemSite checks, after the install sandbox, that the venv's
// pyvenv.cfg (hostile data now) says what was asked of system
// site-packages.
func checkSystemSite(path string, want bool) error {
	cfg, err := readPyvenvCfg(path)
	if err != nil {
		return err
	}
	if got := strings.EqualFold(cfg["include-system-site-packages"], "true"); got != want {
		return fmt.Errorf("venv %q: made %s system site-packages, asked %s", path, with(got), with(want))
	}
	return nil
}

// InstallCommand is the command that installs packages into the venv whose
// interpreter is python, in the install sandbox: uv pip install when uv is
// not "", the venv's pip otherwise, isolated from configuration (pip's
// --isolated, uv's --no-config), with the build cache cache ("" for the
// tool's default) and the index options.
func InstallCommand(uv, python string, idx Index, packages []string, cache string) []string {
	var argv []string
	if uv != "" {
		argv = []string{uv, "pip", "install", "--no-config", "--python", python}
	} else {
		argv = []string{python, "-I", "-m", "pip", "install", "--isolated", "--disable-pip-version-check", "--no-input"}
	}
	if cache != "" {
		argv = append(argv, "--cache-dir", cache)
	}
	if idx.URL != "" {
		argv = append(argv, "--index-url", idx.URL)
	}
	for _, l := range idx.FindLinks {
		argv = append(argv, "--find-links", l)
	}
	if idx.NoIndex {
		argv = append(argv, "--no-index")
	}
	return append(append(argv, "--"), packages...)
}

// lineWriter splits what it is written into lines for line, and keeps the
// last few.
type lineWriter struct {
	line func(string)
	buf  []byte
	tail []string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.emit(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

func (w *lineWriter) flush() {
	if len(w.buf) > 0 {
		w.emit(string(w.buf))
		w.buf = nil
	}
}

func (w *lineWriter) emit(l string) {
	l = strings.TrimRight(l, "\r")
	if strings.TrimSpace(l) == "" {
		return
	}
	if w.line != nil {
		w.line(l)
	}
	w.tail = append(w.tail, l)
	if len(w.tail) > 5 {
		w.tail = w.tail[1:]
	}
}

// Gist is the one line that says why a tool failed: its ERROR lines, else
// its last line of standard error, else of standard output, else err; at
// most 500 bytes, control characters replaced.
func Gist(stderr string, stdoutTail []string, err error) string {
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "ERROR:") || strings.HasPrefix(l, "error:") {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		for _, l := range strings.Split(stderr, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = []string{l}
			}
		}
	}
	if len(lines) == 0 && len(stdoutTail) > 0 {
		lines = []string{stdoutTail[len(stdoutTail)-1]}
	}
	if len(lines) == 0 {
		lines = []string{err.Error()}
	}
	s := strings.Join(lines, "; ")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > 500 {
		s = s[:500] + "..."
	}
	return s
}

// bare drops the operation and path of a *fs.PathError.
func bare(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// execLookPath finds programs on the host's PATH.
var execLookPath = exec.LookPath
