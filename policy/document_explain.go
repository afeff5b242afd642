package policy

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/moat-sandbox/moat"
)

// ExplainRule is one effective rule of a policy document and the layer of
// the Linux engine that enforces it. The zero value says nothing.
type ExplainRule struct {
	// Rule says what holds, for people: "network: none (no network at all)".
	Rule string
	// Layer names what enforces it: "Landlock", "mount namespace",
	// "seccomp", "network namespace", "moat's proxy", "rlimits"...
	Layer string
}

// Explain returns the effective rules of d on host h, in the order a
// reader needs them, each with its layer. It reads what [Document.Exec]
// reads (the cwd, its fragment files, the agents' sockets, gpgconf) but
// creates nothing: no audit log is opened and no sandbox is built, so
// what the host can really enforce is for moat doctor to say.
func (d *Document) Explain(h ExecHost) ([]ExplainRule, error) {
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
	l.Env = d.envEntries(h.Environ, agents)
	res, err := Merge(l)
	if err != nil {
		return nil, err
	}
	cfg := res.Config
	cfg.HideProc = d.Proc == ProcNone
	cfg.VirtualFiles = d.Filesystem.Virtual
	plan, err := applyDocumentFilesystem(&cfg, cwd, home, d.Filesystem)
	if err != nil {
		return nil, err
	}
	const (
		mountLandlock = "mount namespace (only allowed paths exist) and Landlock"
		hygiene       = "process hygiene (moat rebuilds the environment)"
	)
	var out []ExplainRule
	add := func(layer, format string, args ...any) {
		out = append(out, ExplainRule{Rule: fmt.Sprintf(format, args...), Layer: layer})
	}
	add("moat (the sandbox's helper starts it)", "command: %s, run without a shell", quoteList(d.Command))
	for _, l := range plan.LeftByKilledRun {
		add("moat (the next run's sweep)", "%s: left by a run killed before Close; not read as the policy, and set aside when the next run starts", l)
	}
	add(mountLandlock, "cwd: %s, readable; writable only where the writable patterns say", cwd)
	add(mountLandlock, "isolation: %s (%s)", cfg.Isolation, isolationWords(cfg.Isolation))
	add("Landlock and noexec mounts", "moat's private working directory, HOME and /tmp are writable; %s", xorWords(cfg.Build))
	for _, g := range cfg.Grants {
		add("Landlock and mount namespace (bind mounts)", "grant %s: %s", g.Path, accessWords(g.Access))
	}
	for _, g := range res.Grants {
		add("Landlock and mount namespace (bind mounts)", "grant %s: %s (from grants)", g.Path, accessWords(g.Access))
	}
	for _, p := range cfg.Deny {
		add("Landlock (EACCES) and mount namespace", "deny %s: no read, write or execute", p)
	}
	for _, p := range cfg.ReadOnly {
		add("mount namespace (read-only bind) and Landlock", "read-only %s inside a writable place", p)
	}
	for _, p := range cfg.Seal {
		add("Landlock (no rule for what appears later)", "sealed %s: entries created after the start are denied", p)
	}
	for _, p := range sortedKeys(cfg.VirtualFiles) {
		add("mount namespace (a read-only file over the path, never written to the host)", "virtual %s: %d bytes, read-only", p, len(cfg.VirtualFiles[p]))
	}
	if cfg.HideProc {
		add("mount namespace", "/proc: not mounted")
	} else {
		add("mount and PID namespaces", "/proc: the sandbox's own, showing only its processes")
	}
	add("mount namespace (masks) and Landlock (carved rules)", "protections: %s", protectionWords(*cfg.Security))
	switch res.Network.Mode {
	case NetworkDeny:
		add("network namespace (only lo); without namespaces, Landlock (TCP connect) and seccomp (other sockets)", "network: none, no connection leaves the sandbox")
	case NetworkHost:
		add("none: no network namespace and no proxy (moat.HostNetwork, shown in the report)", "network: host, every connection the host can make, none audited")
	case NetworkAllowAll:
		add("moat's proxy (per request, loopback and private addresses refused) behind a network namespace", "network: allow-all public hosts")
	case NetworkAllowList:
		add("moat's proxy (per request) behind a network namespace", "network: allow-list %s", strings.Join(res.Network.AllowDomains, ", "))
	}
	if len(res.Network.AllowLocal) > 0 {
		add("moat's proxy", "local ranges the proxy may dial: %s", strings.Join(res.Network.AllowLocal, ", "))
	}
	if res.Network.AuditLog != "" {
		add("moat's proxy (a decision is written before the connection proceeds)", "audit log: %s%s", res.Network.AuditLog, map[bool]string{true: " (daily files)"}[res.Network.AuditRotate == RotateDaily])
	}
	if d.Env.Blocklist {
		add(hygiene, "environment: every host variable except %s and what moat sets (PATH, HOME, TMPDIR, proxies...); LD_* and DYLD_* stripped", orNone(d.Env.Deny))
	} else {
		var names []string
		for _, e := range l.Env {
			if !e.Set {
				names = append(names, e.Name)
			}
		}
		add(hygiene, "environment: host variables %s, besides moat's harmless defaults (TERM, LANG, LC_*, TZ); LD_* and DYLD_* stripped", orNone(names))
	}
	for _, e := range d.Env.Set {
		add(hygiene, "environment: %s set", e.Name)
	}
	for _, s := range agents.Sockets {
		add("socket guard (seccomp user notification; the socket is made visible)", "agent socket %s: connectable", s)
	}
	if d.SSHAgent || d.GPGAgent || d.AgeAgent {
		if len(agents.Sockets) == 0 {
			add("nothing to enforce", "agents: opted in, but no socket of theirs exists")
		}
	}
	add("seccomp", "refused system calls: ptrace, bpf, mount, new namespaces, keyrings, io_uring, UDP and raw sockets...")
	add("rlimits, and cgroups or the sandbox's init for the whole tree", "limits: %s", limitWords(cfg))
	if cfg.Limits.Timeout > 0 {
		add("moat (kills the whole tree)", "timeout: %s", cfg.Limits.Timeout)
	}
	if d.Stdio == StdioPiped {
		add("moat", "stdio: piped (standard input is /dev/null)")
	}
	if cfg.Enforcement == moat.BestEffort {
		add("moat", "enforcement: best-effort, a layer the host lacks is left out and reported")
	} else {
		add("moat", "enforcement: strict, moat exec exits 2 if the host lacks a layer")
	}
	return out, nil
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = strconv.Quote(x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func isolationWords(i moat.Isolation) string {
	switch i {
	case moat.IsolationStrict:
		return "system files only, besides the cwd and grants"
	case moat.IsolationPermissive:
		return "everything readable but protected paths"
	}
	return "system files and the home's toolchain files, read-only"
}

func xorWords(build bool) string {
	if build {
		return "build mode: the private working directory is executable too"
	}
	return "nothing written in the sandbox can be executed"
}

func accessWords(a moat.Access) string {
	switch {
	case a.CanWrite() && a.CanExec():
		return "read, write and execute"
	case a.CanWrite():
		return "read and write"
	case a.CanExec():
		return "read and execute"
	}
	return "read"
}

// protectionWords lists the switches of s that are on.
func protectionWords(s moat.SecurityConfig) string {
	v := reflect.ValueOf(s)
	var on, off []string
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Type.Kind() != reflect.Bool {
			continue
		}
		if v.Field(i).Bool() {
			on = append(on, lowerCamel(f.Name))
		} else {
			off = append(off, lowerCamel(f.Name))
		}
	}
	return "on: " + orNone(on) + "; off: " + orNone(off)
}

func limitWords(c moat.Config) string {
	l := c.Limits
	n := func(v int64, def string, size bool) string {
		switch {
		case v < 0:
			return Unlimited
		case v == 0:
			return def
		case size:
			return FormatSize(v)
		}
		return strconv.FormatInt(v, 10)
	}
	return fmt.Sprintf("memory %s, cpu time %s, file size %s, processes %s, open files %s, disk %s",
		n(l.MemoryBytes, "half of RAM", true), n(l.CPUSeconds, "none", false), n(l.FileSizeBytes, "4G", true),
		n(l.Processes, "1024", false), n(l.OpenFiles, "1024", false), n(l.DiskBytes, "half of the free space", true))
}
