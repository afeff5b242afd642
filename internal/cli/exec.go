package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/hostinput"
	"github.com/moat-sandbox/moat/policy"
)

// execOptions are the flags of moat exec: Heimdall's, by Heimdall's names.
type execOptions struct {
	policy string   // --policy FILE or -
	allow  []string // --allow-env
	deny   []string // --deny-env
	cwd    string   // --cwd
	stdio  string   // --stdio
	noProc bool     // --no-proc
	quiet  bool     // --quiet
	report *reportJSON
}

// execDirectFlags are the flags that describe the command directly, which
// --policy replaces.
var execDirectFlags = []string{"allow-env", "deny-env", "cwd", "stdio", "no-proc"}

// newExecCmd builds "moat exec".
func newExecCmd(std stdio) *cobra.Command {
	var o execOptions
	c := &cobra.Command{
		Use:   "exec [--policy FILE|-] [--allow-env NAME]... | [--deny-env NAME]... [--cwd DIR] [--stdio inherit|piped] [--no-proc] [--] COMMAND [ARG...]",
		Short: "Run a command under a JSON policy document (Heimdall's exec)",
		Long: `Run COMMAND in a sandbox described by a JSON policy document (--policy, see
moat policy schema), or by the flags, which are Heimdall's exec flags.

Unlike Heimdall, moat always sandboxes: an empty policy still gets no network,
no host variables beyond TERM, LANG, LC_* and TZ, a cwd it can read but not
write, and moat's protections. The command runs in the cwd (default: the
current directory), which is not moat's working directory: it stays read-only
except where filesystem.writable patterns (or a .moat-write fragment) say.

Where Heimdall's names differ from moat run's:
  --allow-env NAME   moat run --env NAME (exec's default is an empty allowlist)
  --deny-env NAME    blocklist mode; moat run has none (it passes only what --env names)
  --cwd DIR          not moat run --workdir DIR, which makes DIR writable
  --no-proc          the policy's "proc": "none"
  --policy FILE      JSON; moat run --config FILE reads TOML
--policy cannot be combined with those flags or a command: the document holds
them all. --allow-env and --deny-env exclude each other; in a document, deny
overrides allow.

moat exec exits with the command's status, 128+N if signal N killed it, 126 if
it cannot be executed and 127 if it is not found; 2 for any mistake in the
policy or the flags and for any failure to build the sandbox (a host that lacks
a layer included), in which case the command never runs. SIGHUP, SIGINT,
SIGQUIT, SIGTERM, SIGUSR1 and SIGUSR2 are passed on to the command's process
group.`,
		Example: `  moat exec -- printf 'hello\n'
  moat exec --allow-env PATH --cwd project -- make test
  echo '{"command": ["sh", "-c", "echo ok > out/log"], "filesystem": {"writable": ["out/"]}}' | moat exec --policy -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.report.wrap(func() error { return runExec(std, cmd.Flags(), &o, args) })
		},
	}
	c.Flags().SetInterspersed(false)
	fs := c.Flags()
	fs.StringVar(&o.policy, "policy", "", "read the policy document from `FILE` (- for standard input); see moat policy schema. A FILE a sandbox can or could write is refused until moat trust FILE pins it")
	fs.StringArrayVar(&o.allow, "allow-env", nil, "allowlist mode: pass the host variable `NAME` (repeatable; moat run spells it --env NAME)")
	fs.StringArrayVar(&o.deny, "deny-env", nil, "blocklist mode: pass every host variable but `NAME` (repeatable; not with --allow-env)")
	fs.StringVar(&o.cwd, "cwd", "", "run the command in `DIR`, readable but not writable; ~ and $VAR are expanded (default: the current directory)")
	fs.StringVar(&o.stdio, "stdio", policy.StdioInherit, "`MODE` inherit: moat's own streams; piped: /dev/null as standard input, output copied")
	fs.BoolVar(&o.noProc, "no-proc", false, `no /proc in the sandbox (the policy's "proc": "none")`)
	fs.BoolVar(&o.quiet, "quiet", false, quietUsage)
	o.report = addReportJSONFlag(fs, "exec", std.err)
	_ = c.RegisterFlagCompletionFunc("stdio", cobra.FixedCompletions([]string{policy.StdioInherit, policy.StdioPiped}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// execDocument is the policy document of one moat exec: read from
// --policy, or made from the direct flags and the command.
func execDocument(std stdio, fs *pflag.FlagSet, o *execOptions, args []string) (*policy.Document, *hostinput.Input, error) {
	if fs.Changed("policy") {
		var given []string
		for _, name := range execDirectFlags {
			if fs.Changed(name) {
				given = append(given, "--"+name)
			}
		}
		if len(args) > 0 {
			given = append(given, "a command")
		}
		if len(given) > 0 {
			return nil, nil, usagef("--policy cannot be combined with direct exec arguments (%s): the document holds them", strings.Join(given, ", "))
		}
		return readExecPolicy(std, o.policy)
	}
	if len(args) == 0 {
		return nil, nil, usagef("exec: missing command (usage: moat exec [flags] [--] COMMAND [ARG...], or moat exec --policy FILE)")
	}
	if len(o.allow) > 0 && len(o.deny) > 0 {
		return nil, nil, usagef("--allow-env and --deny-env cannot be combined: allowlist mode passes only what --allow-env names, blocklist mode everything but --deny-env")
	}
	for _, name := range o.allow {
		if err := policy.CheckEnvVar(policy.EnvVar{Name: name}); err != nil {
			return nil, nil, usagef("--allow-env %q: %v", name, err)
		}
	}
	for _, name := range o.deny {
		if name == "" {
			return nil, nil, usagef(`--deny-env "": empty variable name`)
		}
	}
	if o.stdio != policy.StdioInherit && o.stdio != policy.StdioPiped {
		return nil, nil, usagef("--stdio %q: want inherit or piped", o.stdio)
	}
	if fs.Changed("cwd") && o.cwd == "" {
		return nil, nil, usagef(`--cwd "": empty; leave it out for the current directory`)
	}
	if args[0] == "" {
		return nil, nil, usagef("exec: empty command name")
	}
	d := &policy.Document{
		Command: args,
		Cwd:     o.cwd,
		Stdio:   o.stdio,
		Env:     policy.DocumentEnv{Allow: o.allow, Deny: o.deny, Blocklist: len(o.deny) > 0},
	}
	if o.noProc {
		d.Proc = policy.ProcNone
	}
	return d, nil, nil
}

// readPolicy reads and checks the policy document at path, or standard
// input for "-", to show or check it (moat policy): the file is parsed as
// hostile input, bounded, and nothing acts on it. Every mistake is a usage
// error.
func readPolicy(std stdio, path string) (*policy.Document, error) {
	var r io.Reader = std.in
	if path != "-" {
		if path == "" {
			return nil, usagef(`--policy "": want a file, or - for standard input`)
		}
		f, err := os.Open(path)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, usagef("%s", &policy.DocumentError{Name: path, Err: err})
		}
		defer f.Close()
		r = f
	}
	d, err := policy.ReadDocument(path, r)
	if err != nil {
		return nil, usagef("%s", err)
	}
	return d, nil
}

// readExecPolicy reads the policy document that moat exec acts on: a
// file is a host input (hostinputs.go), refused when a sandbox could have
// written it, and returned for runExec's check against the run's own
// places; standard input is read as readPolicy does.
func readExecPolicy(std stdio, path string) (*policy.Document, *hostinput.Input, error) {
	if path == "-" || path == "" {
		d, err := readPolicy(std, path)
		return d, nil, err
	}
	in, err := readPolicyFile(path)
	if err != nil {
		return nil, nil, err
	}
	d, err := policy.ReadDocument(path, bytes.NewReader(in.Data))
	if err != nil {
		return nil, nil, usagef("%s", err)
	}
	return d, in, nil
}

// execHost is what a policy reads of moat's own process.
func execHost() policy.ExecHost {
	dir, _ := os.Getwd()
	return policy.ExecHost{Environ: os.Environ(), Dir: dir}
}

// setupError marks a failure before the command ran: moat exec exits 2
// for every one, as Heimdall does, and the command never runs.
func setupError(err error) error {
	if err == nil {
		return nil
	}
	var un *moat.UnsupportedError
	if errors.As(err, &un) {
		return usagef(`host cannot enforce the sandbox: %s (see moat doctor, or set "enforcement": "best-effort" in a policy)`, strings.Join(un.Missing, "; "))
	}
	var u *usageError
	if errors.As(err, &u) {
		return err
	}
	return usagef("%s", err)
}

// runExec runs one moat exec and returns its outcome for exitCode.
func runExec(std stdio, fs *pflag.FlagSet, o *execOptions, args []string) (err error) {
	doc, policyInput, err := execDocument(std, fs, o, args)
	if err != nil {
		return err
	}
	plan, err := doc.Exec(execHost())
	if err != nil {
		return setupError(err)
	}
	defer plan.Close()
	if err := o.report.check(plan.Config); err != nil { // reportjson.go
		return err
	}
	if err := policyInput.CheckCurrent(configPlaces(plan.Config)); err != nil { // hostinputs.go
		return usagef("%s", err)
	}
	for _, w := range plan.Warnings {
		fmt.Fprintln(std.err, w)
	}
	sigs := catchSignals()
	defer sigs.stop()
	sb, err := moat.New(plan.Config)
	if err != nil {
		return setupError(err)
	}
	o.report.sandbox(sb)
	defer func() { err = finish(sb, std.err, o.quiet, o.report, err) }()

	cmd := sb.Command(plan.Command[0], plan.Command[1:]...)
	cmd.Dir = plan.Dir
	if plan.Piped {
		// Not *os.File, so moat copies them: the command never holds
		// moat's own descriptors. Stdin stays nil, the null device.
		cmd.Stdout, cmd.Stderr = struct{ io.Writer }{std.out}, struct{ io.Writer }{std.err}
	} else {
		cmd.Stdin, cmd.Stdout, cmd.Stderr = std.in, std.out, std.err
	}
	printAtStart(sb, cmd, std.err, o.quiet) // early.go
	if err := cmd.Start(); err != nil {
		if code, _ := exitCode(err); code == exitNotFound || code == exitCannotExec {
			return err
		}
		return setupError(err)
	}
	o.report.start()
	sigs.forwardTo(cmd.Process)
	err = cmd.Wait()
	// Close may take a while on a large workdir: a signal now stops moat
	// (its default action), and the run journal makes the next run finish
	// what Close did not.
	sigs.stop()
	var exited *moat.ExitError
	if err != nil && !errors.As(err, &exited) {
		return setupError(err)
	}
	return err
}
