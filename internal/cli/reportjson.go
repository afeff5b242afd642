package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/report/jsonv1"
)

// reportJSONUsage is the help text of --report-json, shared by run, exec,
// python and shell.
const reportJSONUsage = "when moat ends, write the run's outcome, what the sandbox was refused (each with the setting and flag that allow it) and its enforcement layers to `FILE` as JSON (see docs/report-json.md); written even with --quiet, and when moat fails once FILE's place is checked"

// reportJSON is --report-json: where a run's JSON report goes, and what
// the run told it. The zero value, and nil, write nothing.
type reportJSON struct {
	flag    choiceValue // --report-json FILE; never "" once given
	path    string      // the flag's value, once the command runs; "" for none
	command string      // the subcommand: run, exec, python, shell
	stderr  io.Writer

	checked bool          // FILE's place passed check; only then is it written
	sb      *moat.Sandbox // once made
	started bool          // the command was started
	cmdErr  error         // what the command's Wait returned, once finish saw it
	waited  bool
}

// addReportJSONFlag registers --report-json on fs for command.
func addReportJSONFlag(fs *pflag.FlagSet, command string, stderr io.Writer) *reportJSON {
	r := &reportJSON{command: command, stderr: stderr, flag: choiceValue{parse: nonEmptyPath, typ: "FILE"}}
	fs.Var(&r.flag, "report-json", reportJSONUsage)
	return r
}

// check refuses FILE's place before anything runs or is created (run,
// python and shell call it from policy's Resolve, exec once its plan is
// made): one a
// sandbox built from cfg could write (as --audit-log's, see
// moat.CheckAuditLogPath), a link at FILE (never followed), something
// other than a regular file, or a directory that is missing or that moat
// cannot write. A refusal is a usage error; nothing is left behind.
func (r *reportJSON) check(cfg moat.Config) error {
	if r == nil || r.path == "" {
		return nil
	}
	refuse := func(problem string) error { return usagef("--report-json %q: %s", r.path, problem) }
	if err := moat.CheckAuditLogPath(r.path, cfg); err != nil { // the same places are refused; the problem is reworded below
		var pe *moat.PlaceError
		if errors.As(err, &pe) {
			return refuse(pe.Problem)
		}
		return refuse(err.Error())
	}
	if fi, err := os.Lstat(r.path); err == nil {
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			return refuse("is a symbolic link, which moat does not follow; name the file itself, or a new one")
		case !fi.Mode().IsRegular():
			return refuse("is not a regular file")
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return refuse(err.Error())
	}
	dir := filepath.Dir(r.path)
	if fi, err := os.Stat(dir); err != nil {
		return refuse("its directory: " + err.Error())
	} else if !fi.IsDir() {
		return refuse("its directory " + dir + " is not a directory")
	}
	if err := writableDir(dir); err != nil { // reportjson_unix.go
		return refuse("its directory: " + err.Error())
	}
	r.checked = true
	return nil
}

// sandbox records the sandbox once made.
func (r *reportJSON) sandbox(sb *moat.Sandbox) {
	if r != nil {
		r.sb = sb
	}
}

// start records that the command started.
func (r *reportJSON) start() {
	if r != nil {
		r.started = true
	}
}

// done records what the command's wait returned, before Close: nil or
// *moat.ExitError for a command that ran.
func (r *reportJSON) done(runErr error) {
	if r == nil {
		return
	}
	var exited *moat.ExitError
	if runErr == nil || errors.As(runErr, &exited) {
		r.started, r.waited, r.cmdErr = true, true, runErr
	}
}

// wrap runs fn, the subcommand, and then, once FILE's place was checked,
// writes the report of how it went. A report that cannot be written is
// moat's failure (125) when the command succeeded, and a printed line
// otherwise, so the command's status is never lost.
func (r *reportJSON) wrap(fn func() error) error {
	if r == nil || r.flag.s == "" {
		return fn()
	}
	r.path = r.flag.s
	began := time.Now()
	err := fn()
	if !r.checked {
		if err == nil {
			return failf("--report-json %q: the run ended before the file's place was checked; nothing written", r.path)
		}
		return err // refused before the place could be checked: see docs/report-json.md
	}
	data, werr := jsonv1.Marshal(r.document(began, time.Since(began), err))
	if werr == nil {
		werr = writeReportFile(r.path, data)
	}
	if werr == nil {
		return err
	}
	werr = fmt.Errorf("--report-json %q: %w", r.path, werr)
	if err == nil {
		return fail(werr)
	}
	fmt.Fprintln(r.stderr, errorLine(werr))
	return err
}

// document builds the report of a subcommand that began at began, took
// took and returned err.
func (r *reportJSON) document(began time.Time, took time.Duration, err error) jsonv1.Document {
	d := jsonv1.New(moduleVersion(), r.command)
	d.Started = r.started
	o := &d.Outcome
	o.StartedAt = began.UTC().Format(time.RFC3339Nano)
	o.DurationMS = took.Milliseconds()
	code, line := exitCode(err)
	o.ExitCode = code
	if r.waited {
		var exited *moat.ExitError
		if errors.As(r.cmdErr, &exited) {
			o.SetExit(exited)
		} else {
			o.SetExited(0)
		}
	}
	var exited *moat.ExitError
	if line != "" && !errors.As(err, &exited) {
		o.Error = strings.TrimPrefix(line, "moat: ")
		o.ErrorKind = errorKind(code)
	}
	if r.sb != nil {
		d.WorkDir = r.sb.WorkDir()
		d.Refusals = jsonv1.FromRefusals(r.sb.Refusals())
		d.Report = jsonv1.FromReport(r.sb.Report())
	}
	return d
}

// errorKind names moat's own exit statuses for the report.
func errorKind(code int) string {
	switch code {
	case exitUsage:
		return "usage"
	case exitCannotExec:
		return "cannot-execute"
	case exitNotFound:
		return "not-found"
	}
	return "failure"
}

// writeReportFile writes data to path whole or not at all: into a new
// file beside it (created exclusively, 0600, never through a link), synced,
// then renamed over path, so a reader sees the old file or the whole new
// one, and a link at path is replaced, never followed.
func writeReportFile(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, tmp, err := createExclusive(dir, "."+base+".moat-")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	syncDir(dir) // reportjson_unix.go: the rename itself survives a crash
	return nil
}
