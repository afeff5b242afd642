package moat

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/internal/statedir"
)

// Build mode ([Config.Build]) is the one switch that lets a sandbox run what
// it builds. It gives up write-xor-execute in exactly two places:
//
//   - the working directory, which becomes executable as well as writable
//     (Landlock's execute right, and a bind without noexec), so that
//     make && ./app, cargo's target/, a venv's bin/ scripts, node_modules/.bin,
//     ./configure's test programs and shared objects a build loads work
//     wherever the project puts them;
//   - a scratch directory of the sandbox's own, removed by Close, that
//     GOTMPDIR points at, so go test and go run can run the binaries they
//     link there without filling the project with them.
//
// Everything else the sandbox can write stays never executable: the home,
// the private temp (TMPDIR, /tmp, /var/tmp), /dev/shm, the host's shared
// temp and every writable grant without EXEC.

// wxDetail says what nothing-written-runs means, for the Report layer and
// the refusals.
const wxDetail = "write-xor-execute: files written in the sandbox cannot be executed"

// buildSetting is the settings id of the switch that lets the working
// directory execute.
const buildSetting = "build"

// buildScratch returns build mode's executable scratch directory, or "" when
// build mode is off or the sandbox has no state directory yet.
func (s *Sandbox) buildScratch() string {
	if !s.cfg.Build || s.dirs.State == "" {
		return ""
	}
	return statedir.Sub(s.dirs.State, statedir.BuildName)
}

// prepareBuild creates build mode's scratch directory in the sandbox's
// state directory (internal/statedir), which Close removes, and returns it; "" when
// build mode is off.
func (s *Sandbox) prepareBuild() (string, error) {
	if !s.cfg.Build {
		return "", nil
	}
	if s.dirs.State == "" {
		return "", errorf("build mode: the sandbox has no state directory for its scratch directory")
	}
	scratch := s.buildScratch()
	if err := os.Mkdir(scratch, 0o700); err != nil {
		return "", errorf("build scratch %q: %w", scratch, paths.Bare(err))
	}
	return scratch, nil
}

// buildEnv is what build mode adds to every command's environment.
func (s *Sandbox) buildEnv() []string {
	if d := s.buildScratch(); d != "" {
		return []string{"GOTMPDIR=" + d}
	}
	return nil
}

// wxLayer is the Report layer that says where write-xor-execute holds and
// what build mode gives up.
func (s *Sandbox) wxLayer() Layer {
	l := Layer{Name: "write-xor-execute", Active: !s.cfg.Build}
	switch {
	case s.cfg.Build:
		l.Detail = "given up by build mode (--build) for the working directory " + s.dirs.Work
		if d := s.buildScratch(); d != "" {
			l.Detail += " and the build scratch " + d + " (GOTMPDIR)"
		}
		l.Detail += ": the sandbox can execute, load and map executable the files it writes there, so native code it compiles or downloads runs; the home, the private temp, /dev/shm, shared temp and writable grants without x stay never executable"
	case s.cfg.Isolation == IsolationPermissive:
		l.Detail = "the working directory, shared temp and writable grants without x are never executable; permissive gives it up elsewhere; --build makes the working directory executable"
	default:
		l.Detail = "nothing the sandbox writes can be executed or mapped executable: the working directory, the home, temp and writable grants without x; --build (Config.Build) makes the working directory executable, for go test, make && ./app, venvs and node_modules/.bin"
	}
	if p := s.cfg.Python; p != nil && p.AllowPipInstall && p.Venv != "" {
		l.Detail += "; AllowPipInstall (--allow-pip-install) gives it up for the venv " + p.Venv + ": its site-packages and bin/ are writable and executable, so what is installed there runs"
	}
	return l
}

// noteExecRefused records that the command itself, real, lies where the
// sandbox may not execute, when that place is one the sandbox writes. A
// program that a command runs in turn (go test's test binary, a script's
// ./app) fails inside the sandbox with EACCES; the backend's supervisor
// reports it where there is one (noteSocketRefusals), else see noteExit.
func (s *Sandbox) noteExecRefused(real string) {
	if !s.writtenPlace(real) {
		return
	}
	s.noteWrittenExec(real)
}

// noteWrittenExec records that write-xor-execute kept the sandbox from
// executing path, a file written in the sandbox: the command itself
// (noteExecRefused), or a program any of its processes ran, as the
// backend's supervisor saw it (noteSocketRefusals).
func (s *Sandbox) noteWrittenExec(path string) {
	r := Refusal{Kind: "exec", Subject: path, Detail: wxDetail}
	if !paths.UnderAny(path, []string{s.dirs.Work}) {
		r.Detail += "; build mode makes only the working directory and Go's GOTMPDIR executable"
	}
	if !s.cfg.Build {
		r.Setting = buildSetting
	}
	s.addRefusal(r)
}

// writtenPlace reports whether path lies where the sandbox writes: the
// working directory, its private temp and home (workdir.go), a writable
// grant.
func (s *Sandbox) writtenPlace(path string) bool {
	places := append([]string{s.dirs.Work}, s.dirs.PrivateRoots(s.cacheStores())...)
	for _, g := range s.cfg.Grants {
		if g.Access.CanWrite() {
			places = append(places, g.Path)
		}
	}
	return paths.UnderAny(path, places)
}

// noteExit records, for a command that exited with 126 (the shell's
// "cannot execute") outside build mode, that write-xor-execute may be why,
// where the backend does not watch execs: the kernel refuses the exec
// inside the sandbox and does not tell moat which file it was. Where it
// does (Linux with namespaces), every such refusal is named already.
func (s *Sandbox) noteExit(name string, code int) {
	if code != 126 || s.cfg.Build || s.backend.SupervisesExec() {
		return
	}
	s.addRefusal(Refusal{
		Kind:    "exec",
		Subject: filepath.Base(strings.TrimSpace(name)) + " exited 126",
		Detail:  "a program it ran could not be executed; if that was a file written in the sandbox (./app, a venv's or node_modules/.bin's script), " + wxDetail,
		Setting: buildSetting,
	})
}
