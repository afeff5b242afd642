package cli

import (
	"errors"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/policy"
)

// sandboxFlags are the policy flags shared by run and shell.
type sandboxFlags struct {
	auditLog   *moat.NetworkAuditLog // opened by config, closed by closeAuditLog
	workDir    string
	env        envList
	memory     sizeValue
	fileSize   sizeValue
	disk       sizeValue
	diskInodes countValue
	cpuTime    countValue
	processes  countValue
	openFiles  countValue
	timeout    durationValue
	nice       niceValue
	ioPriority ioPriorityValue
	bestEffort bool
	build      *bool // --build; nil until given
	grants     grantList
	layered    *policyFlags // the flags that a config file can also set

	fs     *pflag.FlagSet // to tell a flag given as 0 from one not given
	merged *policy.Result // settings, once computed

	allowHomeWorkDir bool // --allow-home-workdir

	home string // --home

	sockets []string // --allow-socket
}

// addSandboxFlags registers the policy flags on fs and returns where their
// values land.
func addSandboxFlags(fs *pflag.FlagSet) *sandboxFlags {
	f := &sandboxFlags{
		fs:         fs,
		cpuTime:    countValue{unit: "SECONDS"},
		processes:  countValue{unit: "N"},
		openFiles:  countValue{unit: "N"},
		diskInodes: countValue{unit: "N"},
	}
	fs.StringVar(&f.workDir, "workdir", "", "use the existing directory `DIR` as the working directory, the only writable place, and keep it (default: a fresh private directory, removed afterwards)")
	fs.StringVar(&f.home, "home", "", "use the existing directory `DIR` as the sandbox's HOME and keep it, so caches (go-build, npm, pip) survive between runs; not your real home (default: a fresh private home, removed afterwards)")
	fs.Var(&f.env, "env", "pass the host's NAME into the sandbox, or set NAME=VALUE (repeatable)")
	fs.Var(&f.memory, "memory", "memory limit, like 512M or 2G, or unlimited (default: half the host's memory)")
	fs.Var(&f.cpuTime, "cpu-time", "CPU time limit of each process in seconds, or unlimited (default: none)")
	fs.Var(&f.fileSize, "file-size", "largest file a process may write, or unlimited (default: 4G)")
	fs.Var(&f.processes, "processes", "most processes and threads, or unlimited (default: 1024)")
	fs.Var(&f.openFiles, "open-files", "most open descriptors of each process, or unlimited (default: 1024)")
	fs.Var(&f.disk, "disk", "how much the working directory's file system may fill, or unlimited (default: half the free space)")
	fs.Var(&f.diskInodes, "disk-inodes", "most files and directories the sandbox may create, or unlimited (default: one per 4 KiB of --disk, at least 1024)")
	fs.Var(&f.timeout, "timeout", "wall-clock limit, like 30s or 2m; the whole process tree is killed after it (default: none)")
	fs.Var(&f.nice, "nice", "lower the CPU priority by N steps, 0 through 19")
	fs.Var(&f.ioPriority, "io-priority", "lower the disk priority")
	fs.Var(&f.grants, "grant", "give the sandbox `PATH=MODE` access, MODE being r, rw, rx or rwx (repeatable; rw never executes, rwx gives that up for PATH)")
	fs.Var(grantShorthand{&f.grants, moat.READ}, "readable", "shorthand for --grant `PATH`=r")
	fs.Var(grantShorthand{&f.grants, moat.WRITE}, "writable", "shorthand for --grant `PATH`=rw")
	fs.Var(grantShorthand{&f.grants, moat.EXEC}, "executable", "shorthand for --grant `PATH`=rx")
	fs.StringArrayVar(&f.sockets, "allow-socket", nil, "let the sandbox connect to the host Unix socket `PATH` (repeatable; by default only sockets the sandbox binds itself are reachable)")
	fs.BoolVar(&f.allowHomeWorkDir, "allow-home-workdir", false, "let --workdir be a home directory, hold one, or hold ~/.local/bin, ~/.config or a directory of PATH: places whose files run later outside the sandbox")
	fs.BoolVar(&f.bestEffort, "best-effort", false, "run even where the host cannot enforce every layer (see moat doctor) instead of failing")
	fs.Var(optionalBool{&f.build}, "build", "build mode: let the sandbox run what it builds (the working directory and go's GOTMPDIR become executable; the home and temp stay not executable)")
	fs.Lookup("build").NoOptDefVal = "true"
	f.layered = addPolicyFlags(fs)
	return f
}

// config builds the sandbox policy from the flags and the config file. It
// checks what parsing could not, such as that the working directory exists
// and how the file and the flags combine, so that a mistake is a usage
// error with no side effects rather than a failure of moat.New.
func (f *sandboxFlags) config() (moat.Config, error) {
	res, err := f.settings()
	if err != nil {
		return moat.Config{}, err
	}
	cfg := res.Config
	if f.bestEffort {
		cfg.Enforcement = moat.BestEffort
	}
	if res.WorkDir != "" {
		fi, err := os.Stat(res.WorkDir)
		switch {
		case err != nil:
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return cfg, usagef("%s %q: %v", res.Describe("workdir.path"), res.WorkDir, err)
		case !fi.IsDir():
			return cfg, usagef("%s %q: not a directory", res.Describe("workdir.path"), res.WorkDir)
		}
	}
	if err := f.checkInputs(&res); err != nil { // checks.go
		return cfg, err
	}
	cfg.AllowHomeWorkDir = f.allowHomeWorkDir
	if res.WorkDir != "" || len(res.Grants) > 0 {
		// Resolve what the user wrote once, here: links in their own
		// spelling are followed, links planted where the sandbox writes
		// are refused.
		wd, grants, err := moat.ResolvePaths(res.WorkDir, res.Grants)
		if err != nil {
			return cfg, resolveError(err, res.WorkDir)
		}
		cfg.WorkDir = wd
		if len(grants) > 0 {
			cfg.Grants = grants
		}
	}
	sockets, err := socketPaths(f.sockets)
	if err != nil {
		return cfg, err
	}
	cfg.Sockets = sockets
	if res.Home != "" {
		if err := moat.CheckHome(res.Home); err != nil {
			msg := strings.TrimPrefix(err.Error(), "moat: ")
			if at := res.Describe("home"); at != "--home" {
				msg = at + ": " + msg // the config file's line
			}
			return cfg, usagef("%s", msg)
		}
		cfg.Home = res.Home
	}
	// Last: it opens the audit log, once nothing else can fail.
	log, err := networkConfig(res.Network, &cfg)
	if err != nil {
		return cfg, err
	}
	f.auditLog = log
	return cfg, nil
}

// closeAuditLog closes the audit log that config opened, if any.
func (f *sandboxFlags) closeAuditLog() {
	if f.auditLog != nil {
		f.auditLog.Close()
	}
}
