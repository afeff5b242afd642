package policy

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/runjournal"
	"github.com/moat-sandbox/moat/ipc"
)

// ExecHost is what [Document.Exec] reads of the host. The zero value has
// no environment and no current directory, so a document must then give
// an absolute cwd.
type ExecHost struct {
	// Environ is the host environment, as os.Environ gives it: the
	// variables that may pass, HOME for ~, and the agents' variables.
	Environ []string
	// Dir is the current directory: the cwd when the document gives
	// none, and what a relative cwd is relative to.
	Dir string
}

// Exec is a policy document made ready to run: the sandbox's Config and
// how to run the command in it. The zero value runs nothing.
type Exec struct {
	// Config is the sandbox policy, resolved and checked by
	// [moat.Config.Validate]. Its WorkDir is empty (a fresh private one):
	// the cwd is not moat's working directory, since that would make it
	// writable; it is readable, and writable only where patterns say.
	Config moat.Config
	// AuditLog is the audit log Config writes, opened by Exec; nil for
	// none. [Exec.Close] closes it.
	AuditLog *moat.NetworkAuditLog
	// Command is the argv.
	Command []string
	// Dir is the cwd, absolute and with its links resolved: the
	// command's working directory ([moat.Cmd.Dir]).
	Dir string
	// Piped is true for StdioPiped: standard input is the null device
	// and the output is copied.
	Piped bool
	// Agents is what the agent opt-ins found.
	Agents Agents
	// Warnings are lines, each reading "moat: warning: ...", that moat
	// exec prints before the command runs: what the plan could not
	// cover, such as a denied file's hard link outside the cwd. Nil for
	// none.
	Warnings []string
}

// Close closes the audit log, if Exec opened one.
func (e *Exec) Close() error {
	if e.AuditLog == nil {
		return nil
	}
	return e.AuditLog.Close()
}

// sandboxEnv are the variables that moat sets for the sandbox and that
// blocklist mode therefore does not take from the host: the private home
// and temp, the filtered PATH, the user, the shell's own, the build
// scratch, IPC, a venv; and every proxy variable (any name holding
// "proxy"), which points at moat's proxy or at nothing.
var sandboxEnv = []string{"PATH", "HOME", "TMPDIR", "TMP", "TEMP", "USER", "LOGNAME", "SHELL", "PWD", "OLDPWD", "SHLVL", "_", "GOTMPDIR", "VIRTUAL_ENV", ipc.EndpointEnv}

// sandboxOwnsEnv reports whether moat sets name for the sandbox itself.
func sandboxOwnsEnv(name string) bool {
	return slices.Contains(sandboxEnv, name) || strings.Contains(strings.ToLower(name), "proxy")
}

// Exec builds what moat exec runs for d on host h. In order: the cwd is
// expanded (~, $VAR), made absolute and must be an existing directory
// ("invalid cwd: P"); the agents that d opts into are found; the
// document's settings, its environment and the agents' sockets make one
// [Layer], which goes through [Merge] and [Result.Resolve] like every
// front end's; then what runs killed before Close left is swept (so that
// no fragment they planted in the cwd is read), /proc, the virtual files
// and the filesystem patterns ([ApplyFilesystem]) are added, the user's home becomes the command's
// (read-only but where writable patterns say, its run-code entries and
// the cwd's control names guarded: document_home.go), and the whole
// Config passes
// [moat.Config.Validate]. Every error is a mistake of the policy or of
// the host's state, with nothing left open.
func (d *Document) Exec(h ExecHost) (*Exec, error) {
	home, _ := lookupEnviron(h.Environ, "HOME")
	cwd, err := d.cwd(h, home)
	if err != nil {
		return nil, err
	}
	agents, err := DiscoverAgents(h.Environ, AgentOptions{SSH: d.SSHAgent, GPG: d.GPGAgent, Age: d.AgeAgent})
	if err != nil {
		return nil, err
	}
	l := d.layer()
	if l.AuditLog, err = placePath(d.AuditLog, cwd, home); err != nil {
		return nil, fmt.Errorf("auditLog %q: %w", d.AuditLog, err)
	}
	l.Grants = nil
	for _, g := range d.Grants {
		p, err := placePath(g.Path, cwd, home)
		if err != nil {
			return nil, fmt.Errorf("grants %q: %w", g.Path, err)
		}
		l.Grants = append(l.Grants, moat.PathRequest{Path: p, Access: g.Access})
	}
	l.Env = d.envEntries(h.Environ, agents)
	l.Sockets = agents.Sockets
	res, err := Merge(l)
	if err != nil {
		return nil, err
	}
	out, err := res.Resolve()
	if err != nil {
		return nil, documentWords(err)
	}
	cfg := out.Config
	cfg.HideProc = d.Proc == ProcNone
	if len(d.Filesystem.Virtual) > 0 {
		cfg.VirtualFiles = maps.Clone(d.Filesystem.Virtual)
	}
	// A run killed before Close may have planted fragments in the cwd:
	// they are swept before a run reads them (reading or explaining a
	// policy alone sweeps nothing).
	runjournal.Sweep()
	plan, err := applyDocumentFilesystem(&cfg, cwd, home, d.Filesystem)
	if err != nil {
		out.Close()
		return nil, err
	}
	setHome := !slices.ContainsFunc(d.Env.Set, func(v EnvVar) bool { return v.Name == "HOME" })
	if err := applyExecHome(&cfg, home, cwd, h.Environ, d.Filesystem.Writable, grantPaths(l.Grants), setHome); err != nil { // document_home.go
		out.Close()
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		out.Close()
		return nil, err
	}
	return &Exec{Config: cfg, AuditLog: out.AuditLog, Command: slices.Clone(d.Command), Dir: cwd, Piped: d.Stdio == StdioPiped, Agents: agents, Warnings: plan.Warnings()}, nil
}

// cwd returns the directory the command runs in: d.Cwd expanded, or the
// current directory, absolute and with links resolved.
func (d *Document) cwd(h ExecHost, home string) (string, error) {
	raw := d.Cwd
	if raw == "" {
		raw = h.Dir
	}
	if raw == "" {
		return "", errors.New("invalid cwd: no current directory")
	}
	shown := quoteOdd(raw)
	p, err := ExpandPath(raw, h.Environ)
	if err != nil {
		return "", fmt.Errorf("invalid cwd: %s: %w", shown, err)
	}
	if !filepath.IsAbs(p) {
		if h.Dir == "" {
			return "", fmt.Errorf("invalid cwd: %s: relative, and there is no current directory", shown)
		}
		p = filepath.Join(h.Dir, p)
	}
	fi, err := os.Stat(p)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("invalid cwd: %s", shown)
	}
	if err := plantedLinkError("invalid cwd:", p); err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("invalid cwd: %s: %w", shown, unwrapPath(err))
	}
	return real, nil
}

// ExpandPath expands a path as a shell would, without running one: a
// leading ~ (alone or before /) is $HOME, and $NAME or ${NAME} is the
// variable's value in environ. An unset variable, an unclosed ${, or
// ~user is an error, so that a typo never names another directory.
func ExpandPath(p string, environ []string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, _ := lookupEnviron(environ, "HOME")
		if !filepath.IsAbs(home) {
			return "", errors.New("~ needs $HOME set to an absolute path")
		}
		p = home + p[1:]
	} else if strings.HasPrefix(p, "~") {
		return "", errors.New("only ~ and ~/ are expanded")
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] != '$' {
			b.WriteByte(p[i])
			continue
		}
		rest := p[i+1:]
		var name string
		switch {
		case strings.HasPrefix(rest, "{"):
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return "", errors.New("unclosed ${")
			}
			name = rest[1:end]
			i += end + 1
		default:
			n := 0
			for n < len(rest) && (rest[n] == '_' || rest[n] >= 'A' && rest[n] <= 'Z' || rest[n] >= 'a' && rest[n] <= 'z' || n > 0 && rest[n] >= '0' && rest[n] <= '9') {
				n++
			}
			if n == 0 {
				b.WriteByte('$') // a lone $ stays
				continue
			}
			name = rest[:n]
			i += n
		}
		v, ok := lookupEnviron(environ, name)
		if !ok || !validEnvName(name) {
			return "", fmt.Errorf("$%s is not set", name)
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

// placePath makes a path of the document absolute: ~/ is home, and a
// relative path is relative to the cwd. "" stays "".
func placePath(p, cwd, home string) (string, error) {
	switch {
	case p == "":
		return "", nil
	case p == "~" || strings.HasPrefix(p, "~/"):
		if !filepath.IsAbs(home) {
			return "", errors.New("~ needs $HOME set to an absolute path")
		}
		return filepath.Join(home, p[1:]), nil
	case strings.HasPrefix(p, "~"):
		return "", errors.New("only ~/ is expanded")
	case filepath.IsAbs(p):
		return filepath.Clean(p), nil
	}
	return filepath.Join(cwd, p), nil
}

// envEntries is the command's environment as a layer's entries. In
// allowlist mode the allowed host variables pass, less the denied ones;
// in blocklist mode every host variable passes except the denied ones,
// those moat sets for the sandbox (sandboxOwnsEnv), the agents'
// variables and names moat cannot pass (CheckEnvVar). The variables of
// the agents opted into pass either way, then the set ones apply.
func (d *Document) envEntries(environ []string, agents Agents) []EnvVar {
	var out []EnvVar
	denied := func(name string) bool { return slices.Contains(d.Env.Deny, name) }
	if d.Env.Blocklist {
		for _, kv := range environ {
			name, _, _ := strings.Cut(kv, "=")
			if denied(name) || sandboxOwnsEnv(name) || isAgentVar(name) || CheckEnvVar(EnvVar{Name: name}) != nil {
				continue
			}
			out = append(out, EnvVar{Name: name})
		}
	} else {
		for _, name := range d.Env.Allow {
			if !denied(name) {
				out = append(out, EnvVar{Name: name})
			}
		}
	}
	for _, name := range agents.Env {
		out = append(out, EnvVar{Name: name})
	}
	return append(out, d.Env.Set...)
}

// resolveFlags are the flags that Resolve's messages name, with the
// document's keys for them.
var resolveFlags = [][2]string{
	{"--grant ", "grants "},
	{"--audit-log ", "auditLog "},
	{"--allow-socket ", "agent socket "},
	{"--allow-domain", "allowDomains"},
	{"--allow-local ", "allowLocal "},
	{"--network ", "network "},
}

// documentWords names the setting of an error of Resolve, which names
// flags, as a policy document spells it.
func documentWords(err error) error {
	msg := err.Error()
	for _, f := range resolveFlags {
		if rest, ok := strings.CutPrefix(msg, f[0]); ok {
			return &reworded{msg: f[1] + rest, err: err}
		}
	}
	return err
}
