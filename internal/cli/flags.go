package cli

import (
	"github.com/spf13/pflag"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/hostinput"
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

	configInput *hostinput.Input // the config file as read (hostinputs.go); nil for none or -

	allowHomeWorkDir bool // --allow-home-workdir

	home      string // --home
	freshHome bool   // --fresh-home: keep no caches either

	sockets []string // --allow-socket

	python *policy.Python // moat python's venv flags (python.go); nil elsewhere

	heel heelFlags // heel's flags moat had no name for (heel.go)

	report *reportJSON // --report-json (reportjson.go); nil where the command has none
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
	fs.StringVar(&f.workDir, "workdir", "", "use the directory `DIR` as the working directory, the only writable place, and keep it; created (0700) if missing; the home's caches (Go, npm, pip, cargo) are then kept for DIR and this policy, see --fresh-home (default: a fresh private directory and home, removed afterwards)")
	fs.StringVar(&f.home, "home", "", "use the existing directory `DIR` as the sandbox's HOME and keep all of it, config files too, shared by every run given it; not your real home (default: a fresh private home, with only its caches kept under --workdir)")
	fs.BoolVar(&f.freshHome, "fresh-home", false, "with --workdir, keep nothing of the sandbox's home (by default its caches survive: Go's build and module caches, npm's _cacache, pip's and cargo's registry, never its config files, kept per project and policy)")
	fs.VarP(&f.env, "env", freeShorthand(fs, "e"), "pass the host's NAME into the sandbox, or set NAME=VALUE (repeatable)")
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
	addHeelFlags(fs, f) // heel.go: heel's names and flags
	return f
}

// config builds the sandbox policy from the flags and the config file:
// their layers, merged (settings), then resolved by policy.Result.Resolve,
// which checks what parsing could not, such as that the working directory
// exists and how the file and the flags combine, so that a mistake is a
// usage error with no side effects rather than a failure of moat.New. It
// opens the audit log, if any, for closeAuditLog to close.
func (f *sandboxFlags) config() (moat.Config, error) {
	f.applyVerbose() // heel.go: -v is MOAT_TRACE=1
	res, err := f.settings()
	if err != nil {
		return moat.Config{}, err
	}
	if f.freshHome && res.Home != "" {
		return moat.Config{}, usagef("--fresh-home and --home exclude each other: --home keeps the whole home DIR, --fresh-home keeps nothing")
	}
	out, err := res.Resolve(f.report.check) // reportjson.go: --report-json's place, before anything is opened or kept
	if err != nil {
		return moat.Config{}, usagef("%s", err)
	}
	// A named working directory keeps its home's caches (and only them)
	// unless --fresh-home or --home says otherwise; a fresh one has no
	// project to keep them for.
	out.Config.KeepCaches = res.WorkDir != "" && res.Home == "" && !f.freshHome
	f.auditLog = out.AuditLog
	f.heel.kept = out.KeptWorkDir
	return out.Config, nil
}

// closeAuditLog closes the audit log that config opened, if any.
func (f *sandboxFlags) closeAuditLog() {
	if f.auditLog != nil {
		f.auditLog.Close()
	}
}
