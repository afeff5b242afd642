// Package buildmode is build mode (Config.Build), the one switch that lets
// a sandbox run what it builds, and the write-xor-execute notes it makes:
// the report's layer, its scratch directory and the "exec" refusals. It
// depends on nothing of the module but internal/paths, internal/refusal,
// internal/spec and internal/statedir.
//
// Build mode gives up write-xor-execute in exactly two places:
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
package buildmode

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/internal/refusal"
	"github.com/moat-sandbox/moat/internal/spec"
	"github.com/moat-sandbox/moat/internal/statedir"
)

// wxDetail says what nothing-written-runs means, for the Report layer and
// the refusals.
const wxDetail = "write-xor-execute: files written in the sandbox cannot be executed"

// buildSetting is the settings id of the switch that lets the working
// directory execute.
const buildSetting = "build"

// LayerName is the name of the report's write-xor-execute layer.
const LayerName = "write-xor-execute"

// Mode is a sandbox's build mode and where write-xor-execute holds. The
// zero value is build mode off, for a sandbox without a working directory,
// that records nothing.
type Mode struct {
	// On is Config.Build.
	On bool
	// Permissive is true at the permissive isolation level.
	Permissive bool
	// WorkDir is the sandbox's working directory, resolved.
	WorkDir string
	// StateDir is the sandbox's state directory; empty when it has none.
	StateDir string
	// PipVenv is the venv whose site-packages and bin/ AllowPipInstall
	// makes writable and executable; empty when none is.
	PipVenv string
	// Written reports whether a path lies where the sandbox writes; nil
	// means nowhere.
	Written func(path string) bool
	// Refused records the refusals; nil records none.
	Refused *refusal.List
}

// Scratch returns build mode's executable scratch directory, or "" when
// build mode is off or the sandbox has no state directory.
func (m *Mode) Scratch() string {
	if !m.On || m.StateDir == "" {
		return ""
	}
	return statedir.Sub(m.StateDir, statedir.BuildName)
}

// Prepare creates build mode's scratch directory in the sandbox's state
// directory (internal/statedir), which Close removes, and returns it; ""
// when build mode is off.
func (m *Mode) Prepare() (string, error) {
	if !m.On {
		return "", nil
	}
	if m.StateDir == "" {
		return "", errors.New("build mode: the sandbox has no state directory for its scratch directory")
	}
	scratch := m.Scratch()
	if err := os.Mkdir(scratch, 0o700); err != nil {
		return "", fmt.Errorf("build scratch %q: %w", scratch, paths.Bare(err))
	}
	return scratch, nil
}

// Env is what build mode adds to every command's environment; nil when
// it is off.
func (m *Mode) Env() []string {
	if d := m.Scratch(); d != "" {
		return []string{"GOTMPDIR=" + d}
	}
	return nil
}

// Layer is the Report layer that says where write-xor-execute holds and
// what build mode gives up.
func (m *Mode) Layer() spec.Layer {
	l := spec.Layer{Name: LayerName, Active: !m.On}
	switch {
	case m.On:
		l.Detail = "given up by build mode (--build) for the working directory " + m.WorkDir
		if d := m.Scratch(); d != "" {
			l.Detail += " and the build scratch " + d + " (GOTMPDIR)"
		}
		l.Detail += ": the sandbox can execute, load and map executable the files it writes there, so native code it compiles or downloads runs; the home, the private temp, /dev/shm, shared temp and writable grants without x stay never executable"
	case m.Permissive:
		l.Detail = "the working directory, shared temp and writable grants without x are never executable; permissive gives it up elsewhere; --build makes the working directory executable"
	default:
		l.Detail = "nothing the sandbox writes can be executed or mapped executable: the working directory, the home, temp and writable grants without x; --build (Config.Build) makes the working directory executable, for go test, make && ./app, venvs and node_modules/.bin"
	}
	if m.PipVenv != "" {
		l.Detail += "; AllowPipInstall (--allow-pip-install) gives it up for the venv " + m.PipVenv + ": its site-packages and bin/ are writable and executable, so what is installed there runs"
	}
	return l
}

// NoteExecRefused records that the command itself, real, lies where the
// sandbox may not execute, when that place is one the sandbox writes. A
// program that a command runs in turn (go test's test binary, a script's
// ./app) fails inside the sandbox with EACCES; the backend's supervisor
// reports it where there is one, else see NoteExit.
func (m *Mode) NoteExecRefused(real string) {
	if m.Written == nil || !m.Written(real) {
		return
	}
	m.NoteWrittenExec(real)
}

// NoteWrittenExec records that write-xor-execute kept the sandbox from
// executing path, a file written in the sandbox: the command itself
// (NoteExecRefused), or a program any of its processes ran, as the
// backend's supervisor saw it.
func (m *Mode) NoteWrittenExec(path string) {
	r := refusal.Refusal{Kind: "exec", Subject: path, Detail: wxDetail}
	if !paths.UnderAny(path, []string{m.WorkDir}) {
		r.Detail += "; build mode makes only the working directory and Go's GOTMPDIR executable"
	}
	if !m.On {
		r.Setting = buildSetting
	}
	m.add(r)
}

// NoteExit records, for a command that exited with 126 (the shell's
// "cannot execute") outside build mode, that write-xor-execute may be why,
// where the backend does not watch execs (supervised is false): the kernel
// refuses the exec inside the sandbox and does not tell moat which file it
// was. Where it does (Linux with namespaces), every such refusal is named
// already.
func (m *Mode) NoteExit(name string, code int, supervised bool) {
	if code != 126 || m.On || supervised {
		return
	}
	m.add(refusal.Refusal{
		Kind:    "exec",
		Subject: filepath.Base(strings.TrimSpace(name)) + " exited 126",
		Detail:  "a program it ran could not be executed; if that was a file written in the sandbox (./app, a venv's or node_modules/.bin's script), " + wxDetail,
		Setting: buildSetting,
	})
}

// add records r, when m records refusals.
func (m *Mode) add(r refusal.Refusal) {
	if m.Refused != nil {
		m.Refused.Add(r)
	}
}
