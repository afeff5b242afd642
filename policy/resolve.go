package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/runjournal"
	"github.com/moat-sandbox/moat/internal/settings"
	"github.com/moat-sandbox/moat/internal/workdircheck"
)

// Resolved is a [Result] made final: the Config to give [moat.New], and
// what Resolve opened for it. The zero value is the library's zero Config
// with nothing opened.
type Resolved struct {
	// Config is the sandbox policy, its paths resolved and its network
	// policy built.
	Config moat.Config
	// AuditLog is the network audit log that Config's policy writes,
	// opened by Resolve; nil when there is none. Close it once the last
	// sandbox built from Config is closed.
	AuditLog *moat.NetworkAuditLog
	// KeptWorkDir is the fresh working directory that Resolve created for
	// [Result.KeepWorkDir], which stays after the sandbox; "" when there
	// is none.
	KeptWorkDir string
}

// Close closes the audit log, if Resolve opened one.
func (r *Resolved) Close() error {
	if r.AuditLog == nil {
		return nil
	}
	return r.AuditLog.Close()
}

// Build merges layers ([Merge]) and resolves the result ([Result.Resolve]):
// every front end's settings, earliest first, to the Config of a sandbox.
func Build(layers ...Layer) (Resolved, error) {
	r, err := Merge(layers...)
	if err != nil {
		return Resolved{}, err
	}
	return r.Resolve()
}

// Resolve finishes r into the Config that [moat.New] is given. First, as
// heel does, it creates a working directory that does not exist (0700,
// with the missing directories on its way), or with KeepWorkDir and none
// given a fresh one to keep ([Resolved.KeptWorkDir]); either is removed
// again if Resolve fails. It checks, with I/O, what [Merge] could not, so
// that a mistake is an error here with no other side effects rather than
// a failure of moat.New: the working directory
// exists, is a directory and is one [moat.CheckWorkDir] accepts; no grant
// is the root directory; the Config passes [moat.Config.Validate] (such as
// enough open files); the working directory and grants resolve
// ([moat.ResolvePaths]: links of the user's spelling followed, links
// planted where the sandbox writes refused); each socket is an existing
// Unix socket; the kept home passes [moat.CheckHome]; and the network
// settings make a [moat.NetworkPolicy]. Last, once nothing else can fail,
// it opens the audit log (after [moat.CheckAuditLogPath]), which the
// caller closes with [Resolved.Close]. Each of checks runs with the
// resolved Config just before that, so that a file the caller will write
// (a report) is checked against the places the sandbox writes while
// nothing is opened or kept yet; its error is returned as it is.
//
// Each error reads "subject: problem", the subject named as the
// layer that set it spells it ("--workdir", `config "moat.toml": line 9:
// workdir.path`); the command line's names for grants, sockets and the
// network settings.
func (r Result) Resolve(checks ...func(moat.Config) error) (Resolved, error) {
	cfg := r.Config
	// heel.go: a missing working directory is created, and a fresh one to
	// keep made here; removed again if anything below fails.
	made, err := r.makeWorkDir()
	if err != nil {
		return Resolved{}, err
	}
	defer made.undo()
	if r.WorkDir != "" {
		fi, err := os.Stat(r.WorkDir)
		switch {
		case err != nil:
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return Resolved{}, fmt.Errorf("%s %q: %w", r.Describe("workdir.path"), r.WorkDir, err)
		case !fi.IsDir():
			return Resolved{}, fmt.Errorf("%s %q: not a directory", r.Describe("workdir.path"), r.WorkDir)
		}
	}
	if err := r.checkPlaces(); err != nil {
		return Resolved{}, err
	}
	if r.WorkDir != "" || len(r.Grants) > 0 {
		// Resolve what the user wrote once, here: links in their own
		// spelling are followed, links planted where the sandbox writes
		// are refused.
		wd, grants, err := moat.ResolvePaths(r.WorkDir, r.Grants)
		if err != nil {
			return Resolved{}, resolveError(err, r.WorkDir)
		}
		cfg.WorkDir = wd
		if len(grants) > 0 {
			cfg.Grants = grants
		}
	}
	sockets, err := socketPaths(r.Sockets)
	if err != nil {
		return Resolved{}, err
	}
	cfg.Sockets = sockets
	if r.Home != "" {
		if err := plantedLinkError(r.Describe("home"), r.Home); err != nil {
			return Resolved{}, err
		}
		if err := moat.CheckHome(r.Home); err != nil {
			msg := err.Error()
			if at := r.Describe("home"); at != "--home" {
				msg = at + ": " + msg // the config file's line
			}
			return Resolved{}, &reworded{msg: msg, err: err}
		}
		cfg.Home = r.Home
	}
	if err := r.checkNewPlaces(cfg); err != nil {
		return Resolved{}, err
	}
	for _, check := range checks {
		if err := check(cfg); err != nil {
			return Resolved{}, err
		}
	}
	// Last: it opens the audit log, once nothing else can fail.
	log, err := networkPolicy(r.Network, &cfg)
	if err != nil {
		return Resolved{}, err
	}
	made.keep()
	return Resolved{Config: cfg, AuditLog: log, KeptWorkDir: made.kept}, nil
}

// checkPlaces refuses what moat.New would refuse or fail on, so that
// nothing is created for it: a working directory moat.CheckWorkDir refuses
// (the root, /proc, a home without AllowHomeWorkDir, one the user cannot
// open), a grant of the root directory, and a Config that
// moat.Config.Validate refuses, such as too few open files.
func (r *Result) checkPlaces() error {
	if r.WorkDir != "" {
		if err := moat.CheckWorkDir(r.WorkDir, r.Config.AllowHomeWorkDir); err != nil {
			return placeError(r.Describe("workdir.path"), r.WorkDir, err)
		}
	}
	for _, g := range r.Grants {
		p := g.Path
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if p == "/" {
			return fmt.Errorf("--grant %q: is the root directory; grant the directories the command needs instead", g.Path)
		}
	}
	return r.validate()
}

// validKeys names each field that moat.Config.Validate may refuse by the
// key that sets it, for its message.
var validKeys = map[string]string{
	"nice":                "limits.nice",
	"io priority":         "limits.io-priority",
	"isolation":           "isolation",
	"limits: open files":  "limits.max-open-files",
	"limits: memory":      "limits.max-memory",
	"limits: processes":   "limits.max-processes",
	"limits: file size":   "limits.max-file-size",
	"limits: disk":        "limits.max-disk",
	"limits: disk inodes": "limits.max-disk-inodes",
	"limits: cpu time":    "limits.max-cpu-time",
}

// validate checks r's Config with moat's own rules ([moat.Config.Validate])
// and names a refused field as the layer that set it spells it.
func (r *Result) validate() error {
	err := r.Config.Validate()
	var ce *moat.ConfigError
	if !errors.As(err, &ce) {
		return err
	}
	key, ok := validKeys[ce.Field]
	if !ok {
		return err
	}
	return &reworded{msg: fmt.Sprintf("%s %s: %s", r.Describe(key), ce.Value, ce.Problem), err: err}
}

// placeError is a *moat.PlaceError that names the flag or the config key
// that set path instead of the library's subject.
func placeError(key, path string, err error) error {
	var pe *moat.PlaceError
	if errors.As(err, &pe) {
		return &reworded{msg: fmt.Sprintf("%s %q: %s", key, path, pe.Problem), err: err}
	}
	return &reworded{msg: fmt.Sprintf("%s %q: %s", key, path, err.Error()), err: err}
}

// resolveError is a moat.ResolvePaths error that names the flag:
// `--grant "/nonexistent": no such file or directory`. The library names a
// path it could not resolve "path"; it is the working directory when it is
// spelled as workDir, a grant otherwise.
func resolveError(err error, workDir string) error {
	var pe *moat.PlaceError
	if !errors.As(err, &pe) {
		return err
	}
	flag := "--grant"
	switch {
	case pe.Subject == "workdir", workDir != "" && pe.Path == workDir:
		flag = "--workdir"
	case pe.Subject != "grant" && pe.Subject != "path":
		return err
	}
	return &reworded{msg: fmt.Sprintf("%s %q: %s", flag, pe.Path, pe.Problem), err: err}
}

// socketPaths resolves the socket paths the way grants are: made
// absolute, with the links of the user's own spelling followed, and each
// must name an existing Unix socket.
func socketPaths(in []string) ([]string, error) {
	var out []string
	for _, p := range in {
		if err := plantedLinkError("--allow-socket", p); err != nil {
			return nil, err
		}
		abs, err := filepath.Abs(p)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err == nil {
			var fi fs.FileInfo
			if fi, err = os.Stat(abs); err == nil && fi.Mode()&fs.ModeSocket == 0 {
				return nil, fmt.Errorf("--allow-socket %q: not a Unix socket", p)
			}
		}
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, fmt.Errorf("--allow-socket %q: %w", p, err)
		}
		out = append(out, abs)
	}
	return out, nil
}

// reworded is a library error named again for the front ends, such as by
// the setting that gave the path: it reads msg, and errors.Is and
// errors.As see err.
type reworded struct {
	msg string
	err error
}

func (e *reworded) Error() string { return e.msg }
func (e *reworded) Unwrap() error { return e.err }

// checkNewPlaces refuses, here where nothing is kept yet, what moat.New
// would refuse of cfg's places once resolved, so that a usage error leaves
// no working directory behind: a kept home that overlaps the working
// directory, and a working directory, home or grant in moat's state
// directory (internal/workdircheck, the checks New runs).
func (r *Result) checkNewPlaces(cfg moat.Config) error {
	if _, err := workdircheck.HomeConfig(cfg.Home, cfg.WorkDir, moat.ToolchainPaths); err != nil {
		return r.workdircheckError(err)
	}
	root, err := runjournal.StateRoot()
	if err != nil {
		return nil // New fails on the journal, and says why
	}
	grants := make([]string, len(cfg.Grants))
	for i, g := range cfg.Grants {
		grants[i] = g.Path
	}
	return r.workdircheckError(workdircheck.StatePlaces(root, cfg.WorkDir, cfg.Home, grants))
}

// workdircheckError names a place internal/workdircheck refused by the
// flag or config key that set it, and the setting its problem names by
// its flag, as the CLI prints moat's own (nil stays nil).
func (r *Result) workdircheckError(err error) error {
	var e *workdircheck.Error
	if !errors.As(err, &e) {
		return err
	}
	key := map[string]string{"workdir": "workdir.path", "home": "home"}[e.Subject]
	subject := "--grant"
	if key != "" {
		subject = r.Describe(key)
	}
	problem := e.Problem
	if e.Setting != "" {
		problem = strings.Replace(problem, settings.Field(e.Setting), settings.Words(e.Setting), 1)
	}
	return &reworded{msg: fmt.Sprintf("%s %q: %s", subject, e.Path, problem), err: err}
}

// plantedLinkError refuses a path p that passes through a link in a place
// a sandbox of an earlier run could write, which may have planted it to
// lead p elsewhere (moat.ResolvePaths' rule, for a path that is not a
// grant), as "subject "p": problem"; nil for any other path.
func plantedLinkError(subject, p string) error {
	_, _, err := moat.ResolvePaths("", []moat.PathRequest{{Path: p, Access: moat.READ}})
	var pe *moat.PlaceError
	if errors.Is(err, moat.ErrGrantRedirected) && errors.As(err, &pe) {
		return &reworded{msg: fmt.Sprintf("%s %q: %s", subject, p, pe.Problem), err: err}
	}
	return nil
}
