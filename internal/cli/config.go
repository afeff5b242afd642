package cli

import (
	"strings"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/policy"
)

// cliIsolation is the CLI's isolation level when neither a flag nor the
// config file sets one. The library's own default is strict; at the
// command line, default lets toolchains find their files in the home.
var cliIsolation = moat.IsolationDefault

// settings reads the config file, if any, and merges it with the flags:
// the CLI's defaults, then the file, then the command line. The result is
// computed once. Every mistake is a usage error.
func (f *sandboxFlags) settings() (policy.Result, error) {
	if f.merged != nil {
		return *f.merged, nil
	}
	if err := f.checkZeroLimits(); err != nil { // limits_zero.go
		return policy.Result{}, err
	}
	layers := []policy.Layer{{Isolation: &cliIsolation}}
	if path := f.layered.configFile.s; path != "" {
		file, err := f.loadConfig(path) // heel.go: - is standard input
		if err != nil {
			return policy.Result{}, usagef("%s", err.Error())
		}
		layers = append(layers, file.Layer)
	}
	layers = append(layers, f.layer())
	res, err := policy.Merge(layers...)
	if err != nil {
		return policy.Result{}, usagef("%s", err.Error())
	}
	if err := f.checkHostInputs(res); err != nil { // hostinputs.go
		return policy.Result{}, err
	}
	f.merged = &res
	return res, nil
}

// network returns the checked network settings of the flags and the
// config file together, for the sandbox's network policy.
func (f *sandboxFlags) network() (policy.Network, error) {
	res, err := f.settings()
	return res.Network, err
}

// layer returns what the command line sets, with nothing for a flag not
// given.
func (f *sandboxFlags) layer() policy.Layer {
	p := f.layered
	l := policy.Layer{
		Source:       flagSource{},
		Isolation:    p.isolation.p,
		Security:     p.security,
		Network:      p.network.s,
		AllowDomains: p.allowDomains.items,
		AllowLocal:   p.allowLocal.items,
		AuditLog:     p.auditLog.s,
		AuditRotate:  p.auditRotate.s,
		Grants:       f.grants,
		WorkDir:      f.workDir,
		KeepWorkDir:  f.heel.keepWorkDir, // heel.go
		Home:         f.home,
		Env:          f.env.vars(),
		Build:        f.build,
		Sockets:      f.sockets,
	}
	if f.bestEffort {
		e := moat.BestEffort
		l.Enforcement = &e
	}
	if f.python != nil {
		l.Python = *f.python
	}
	if f.fs.Changed("allow-home-workdir") {
		l.AllowHomeWorkDir = &f.allowHomeWorkDir
	}
	count := func(name string, v int64) *int64 {
		if !f.fs.Changed(name) {
			return nil
		}
		return &v
	}
	lim := &l.Limits
	lim.MemoryBytes = count("memory", int64(f.memory))
	lim.CPUSeconds = count("cpu-time", f.cpuTime.n)
	lim.FileSizeBytes = count("file-size", int64(f.fileSize))
	lim.Processes = count("processes", f.processes.n)
	lim.OpenFiles = count("open-files", f.openFiles.n)
	lim.DiskBytes = count("disk", int64(f.disk))
	lim.DiskInodes = count("disk-inodes", f.diskInodes.n)
	if f.fs.Changed("timeout") {
		d := time.Duration(f.timeout)
		lim.Timeout = &d
	}
	if f.fs.Changed("nice") {
		n := int(f.nice)
		lim.Nice = &n
	}
	if f.fs.Changed("io-priority") {
		io := moat.IOPriority(f.ioPriority)
		lim.IOPriority = &io
	}
	return l
}

// flagNames spells the config file's keys as flags where the names differ.
var flagNames = map[string]string{
	"allow-domains":          "--allow-domain",
	"workdir.path":           "--workdir",
	"workdir.keep":           "--keep-working-dir",
	"limits.max-memory":      "--memory",
	"limits.max-cpu-time":    "--cpu-time",
	"limits.max-file-size":   "--file-size",
	"limits.max-processes":   "--processes",
	"limits.max-open-files":  "--open-files",
	"limits.max-disk":        "--disk",
	"limits.max-disk-inodes": "--disk-inodes",
}

// flagSource names the command line's settings in errors by their flags.
type flagSource struct{}

// Key returns the flag that sets key: "--allow-domain" for allow-domains,
// "--allow-gpu" for security.allow-gpu.
func (flagSource) Key(key string) string {
	if name, ok := flagNames[key]; ok {
		return name
	}
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		key = key[i+1:]
	}
	return "--" + key
}

// At returns "": a flag needs no location.
func (flagSource) At(string) string { return "" }
