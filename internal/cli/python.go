package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/policy"
)

// pythonFlags are the flags of moat python that say how its venv is built
// and used; the [python] table of a config file holds the same keys.
type pythonFlags struct {
	venv        string
	packages    []string
	interpreter string
	systemSite  *bool
	backend     choiceValue
	indexURL    choiceValue
	findLinks   []string
	noIndex     *bool
	allowPip    *bool
	code        string
}

// newPythonCmd builds "moat python".
func newPythonCmd(std stdio) *cobra.Command {
	var flags *sandboxFlags
	var quiet bool
	py := &pythonFlags{
		backend:  choiceValue{parse: policy.ParseVenvBackend, typ: "auto|uv|python"},
		indexURL: choiceValue{parse: policy.ParseIndexURL, typ: "URL"},
	}
	c := &cobra.Command{
		Use:   "python [flags] [SCRIPT.py | -c CODE | -] [ARG...]",
		Short: "Run Python in a sandbox, with a venv built beforehand",
		Long: `Run a Python script, -c CODE, or standard input (-, or nothing: an
interactive interpreter when standard input is a terminal) in a sandbox.

The venv is built first: the host makes it with the interpreter, isolated
(python3 -I -m venv from /, or uv venv --no-config when uv is present), and
pip installs the packages in a sandbox of its own whose only writable place is
the venv and a build cache, and whose network reaches only the package index
(none with --no-index). Nothing in a venv ever runs on the host. Without
--venv it lives in moat's cache, one per interpreter and package set, reused
by every later run that asks for the same. Inside the
sandbox it is readable and executable, never writable, unless
--allow-pip-install, which makes its site-packages and bin/ writable (pip in
the sandbox then also needs a --network that reaches the index). The
venv's interpreter runs with VIRTUAL_ENV and PATH naming the venv, and
MPLBACKEND=Agg unless --env sets it. The venv may not lie in --workdir: in
--build mode the code can make its own venv there.

Every flag of moat run applies. Flags end at SCRIPT: what follows belongs to
the script. The [python] table of --config holds the same keys (venv,
packages, python, system-site-packages, venv-backend, index-url, find-links,
no-index, allow-pip-install).

To let the code install from PyPI itself:
  moat python --venv ~/venvs/dev --allow-pip-install --network allow-list \
    --allow-domain pypi.org --allow-domain files.pythonhosted.org script.py`,
		Example: `  moat python -c 'import sys; print(sys.version)'
  moat python -p numpy --workdir . analysis.py data.csv
  moat python --find-links ../wheels --no-index -p mypkg --workdir . -c 'import mypkg; print(mypkg.__name__)'   # not in a place a sandbox writes
  echo 'print(6*7)' | moat python --isolation strict -`,
		RunE: func(_ *cobra.Command, args []string) error {
			return flags.report.wrap(func() error { return runPython(std, flags, py, quiet, args) })
		},
	}
	fs := c.Flags()
	fs.SetInterspersed(false)
	// -c is the code, as in python, so it comes first: heel's -c for
	// --config is then left out (heel.go).
	fs.StringVarP(&py.code, "code", "c", "", "run the program `CODE`, like python -c")
	flags = addSandboxFlags(fs)
	fs.BoolVar(&quiet, "quiet", false, quietUsage)
	flags.report = addReportJSONFlag(fs, "python", std.err)
	fs.StringVar(&py.venv, "venv", "", "build (or reuse) the venv at `DIR` (default: one in moat's cache per interpreter and package set)")
	fs.StringArrayVarP(&py.packages, "package", "p", nil, "install the pip requirement `P` into the venv (repeatable)")
	fs.StringVar(&py.interpreter, "python", "", "build the venv from the interpreter `P`, a name on PATH or a path (default: python3)")
	fs.Var(optionalBool{&py.systemSite}, "system-site-packages", "let the venv see the interpreter's own packages, such as the distribution's numpy (default: true)")
	fs.Lookup("system-site-packages").NoOptDefVal = "true"
	fs.Var(&py.backend, "venv-backend", "the tool that builds the venv (default: auto, uv when on PATH)")
	fs.Var(&py.indexURL, "index-url", "install from the package index at `URL` instead of pip's default")
	fs.StringArrayVar(&py.findLinks, "find-links", nil, "also install from the distributions in `DIR` (or at a URL) (repeatable)")
	fs.Var(optionalBool{&py.noIndex}, "no-index", "install from --find-links only, with no index")
	fs.Lookup("no-index").NoOptDefVal = "true"
	fs.Var(optionalBool{&py.allowPip}, "allow-pip-install", "let the sandbox install into the venv: its site-packages and bin/ become writable and executable")
	fs.Lookup("allow-pip-install").NoOptDefVal = "true"
	completeFlagValues(c)
	return c
}

// layer is what the python flags set, for the command line's layer.
func (p *pythonFlags) layer() (policy.Python, error) {
	out := policy.Python{
		Interpreter:        p.interpreter,
		SystemSitePackages: p.systemSite,
		VenvBackend:        p.backend.s,
		IndexURL:           p.indexURL.s,
		NoIndex:            p.noIndex,
		AllowPipInstall:    p.allowPip,
	}
	if p.venv != "" {
		abs, err := filepath.Abs(p.venv)
		if err != nil {
			return out, usagef("--venv %q: %v", p.venv, err)
		}
		out.Venv = abs
	}
	if strings.HasPrefix(p.interpreter, "-") {
		return out, usagef("--python %q: want an interpreter's name or path", p.interpreter)
	}
	if strings.Contains(p.interpreter, "/") {
		abs, err := filepath.Abs(p.interpreter)
		if err != nil {
			return out, usagef("--python %q: %v", p.interpreter, err)
		}
		out.Interpreter = abs
	}
	for _, s := range p.packages {
		pkg, err := policy.ParsePackage(s)
		if err != nil {
			return out, usagef("--package %q: %v", s, err)
		}
		out.Packages = append(out.Packages, pkg)
	}
	for _, l := range p.findLinks {
		if err := policy.CheckFindLink(l); err != nil {
			return out, usagef("--find-links %q: want a directory or a URL", l)
		}
		if !strings.Contains(l, "://") {
			abs, err := filepath.Abs(l)
			if err != nil {
				return out, usagef("--find-links %q: %v", l, err)
			}
			l = abs
		}
		out.FindLinks = append(out.FindLinks, l)
	}
	return out, nil
}

// pythonInvocation is what moat python runs: the interpreter's arguments,
// a host file the sandbox must read (the script), and whether it reads
// standard input interactively.
type pythonInvocation struct {
	args   []string
	script string
	repl   bool
}

// invocation decides what to run from -c and the positional arguments.
func (p *pythonFlags) invocation(args []string, stdinTerminal bool) (pythonInvocation, error) {
	if p.code != "" {
		return pythonInvocation{args: append([]string{"-c", p.code}, args...)}, nil
	}
	if len(args) == 0 {
		if stdinTerminal {
			return pythonInvocation{repl: true}, nil
		}
		return pythonInvocation{args: []string{"-"}}, nil
	}
	if args[0] == "-" {
		return pythonInvocation{args: args}, nil
	}
	if strings.HasPrefix(args[0], "-") {
		return pythonInvocation{}, usagef("python: %q: put moat's flags before the script, and the interpreter's own options are not supported; use -c CODE, SCRIPT.py or -", args[0])
	}
	abs, err := filepath.Abs(args[0])
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return pythonInvocation{}, usagef("python: script %q: %v", args[0], bareErr(err))
	}
	fi, err := os.Stat(abs)
	if err != nil || !fi.Mode().IsRegular() {
		return pythonInvocation{}, usagef("python: script %q: not a regular file", args[0])
	}
	return pythonInvocation{args: append([]string{abs}, args[1:]...), script: abs}, nil
}

// bareErr drops the operation and path of a *os.PathError.
func bareErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// runPython builds the venv on the host, then runs the interpreter in a
// sandbox built from flags, and prints what the sandbox was refused at the
// end, unless quiet.
func runPython(std stdio, flags *sandboxFlags, py *pythonFlags, quiet bool, args []string) (err error) {
	inv, err := py.invocation(args, term.IsTerminal(int(std.in.Fd())))
	if err != nil {
		return err
	}
	pl, err := py.layer()
	if err != nil {
		return err
	}
	flags.python = &pl
	if inv.script != "" && !scriptInWorkDir(inv.script, flags.workDir) {
		flags.grants = append(flags.grants, moat.PathRequest{Path: inv.script, Access: moat.READ})
	}
	flags.heel.stdin = std.in
	res, err := flags.settings()
	if err != nil {
		return err
	}
	if flags.heel.stdinRead && (inv.repl || len(inv.args) > 0 && inv.args[0] == "-") {
		return usagef("--config -: standard input is the program's here; give the config as a file")
	}
	vc, err := res.Python.VenvConfig()
	if err != nil {
		return usagef("%s", err)
	}
	cfg, err := flags.config()
	if err != nil {
		return err
	}
	defer flags.closeAuditLog()
	defer flags.printKept(std.err) // heel.go
	sigs := catchSignals()
	defer sigs.stop()
	mgr := &moat.VenvManager{Progress: venvProgress(std.err)}
	// A signal that asks moat to end stops the venv build (its host step
	// and its install sandbox), which leaves nothing half built.
	ctx, building := sigs.stopOn(context.Background())
	v, err := mgr.Create(ctx, vc)
	if s := building(); s != nil {
		fmt.Fprintln(std.err, errorLine(fmt.Errorf("venv: the build was stopped by %s; what it had made was removed", signalName(s))))
		return &exitStatus{code: 128 + signalNumber(s)}
	}
	if err != nil {
		return fail(err)
	}
	cfg.Python = &moat.PythonConfig{Venv: v.Path, AllowPipInstall: res.Python.AllowPip()}
	sb, err := moat.New(cfg)
	if err != nil {
		return sandboxError(err)
	}
	flags.report.sandbox(sb)
	defer func() { err = finish(sb, std.err, quiet, flags.report, err) }()
	if inv.repl {
		return pythonREPL(std, sb, sigs)
	}
	cmd := sb.PythonCommand(inv.args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = flags.childStdin(std.in), std.out, std.err
	printAtStart(sb, cmd, std.err, quiet) // early.go
	if err := cmd.Start(); err != nil {
		return startError(err)
	}
	flags.report.start()
	sigs.forwardTo(cmd.Process)
	err = cmd.Wait()
	// Close may take a while on a large workdir: a signal now stops moat
	// (its default action), and the run journal makes the next run finish
	// what Close did not.
	sigs.stop()
	return err
}

// scriptInWorkDir reports whether the script lies in the working directory
// given (none: a fresh one, which holds nothing yet).
func scriptInWorkDir(script, workDir string) bool {
	if workDir == "" {
		return false
	}
	wd, err := filepath.Abs(workDir)
	if err == nil {
		wd, err = filepath.EvalSymlinks(wd)
	}
	return err == nil && paths.Under(script, wd)
}

// venvProgress reports Create's steps on w, one moat: line per step; on a
// terminal, the install's progress is one line redrawn, as a bar. A reused
// venv prints nothing.
func venvProgress(w *os.File) func(moat.VenvProgress) {
	tty := term.IsTerminal(int(w.Fd()))
	drawn := false
	return func(p moat.VenvProgress) {
		switch p.Phase {
		case "reuse":
			return
		case "install":
			if !tty {
				if p.Done == 0 && strings.HasPrefix(p.Message, "installing ") {
					fmt.Fprintf(w, "moat: venv: %s\n", printable(p.Message))
				}
				return
			}
			fmt.Fprintf(w, "\r\x1b[Kmoat: venv: %s %d/%d %s", bar(p.Done, p.Total, 20), p.Done, p.Total, printable(clip(p.Message, 50)))
			drawn = true
			return
		}
		if drawn {
			fmt.Fprint(w, "\r\x1b[K")
			drawn = false
		}
		fmt.Fprintf(w, "moat: venv: %s\n", printable(p.Message))
	}
}

// bar draws done of total in width cells.
func bar(done, total, width int) string {
	n := 0
	if total > 0 {
		n = done * width / total
	}
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "]"
}

// clip shortens s to at most n bytes.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n-3] + "..."
	}
	return s
}

// pythonREPL runs the interactive interpreter on a terminal of its own, as
// moat shell runs a shell.
func pythonREPL(std stdio, sb *moat.Sandbox, sigs *forwarder) error {
	return runOnTerminal(std, sb, sigs, "python", sb.PythonCommand()) // shell.go
}
