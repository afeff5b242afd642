package cli

import (
	"github.com/spf13/pflag"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/policy"
)

// policyFlags are the flags that a config file can also set: the file
// itself, the isolation level, the protections and the network.
type policyFlags struct {
	configFile   choiceValue
	isolation    isolationValue
	security     moat.SecurityOverrides
	network      choiceValue
	allowDomains listValue
	allowLocal   listValue
	auditLog     choiceValue
	auditRotate  choiceValue
}

// addPolicyFlags registers the policy flags on fs and returns where their
// values land. --config is also heel's -c where the command has no -c of
// its own (moat python's is its code); flags end at the command, so a
// command's own -c is never taken for it. Each protection stays nil until
// given.
func addPolicyFlags(fs *pflag.FlagSet) *policyFlags {
	f := &policyFlags{
		configFile:   choiceValue{parse: nonEmptyPath, typ: "FILE"},
		network:      choiceValue{parse: policy.ParseNetworkMode, typ: "deny|allow-all|allow-list"},
		allowDomains: listValue{parse: policy.ParseDomain, typ: "PATTERN"},
		allowLocal:   listValue{parse: policy.ParseLocal, typ: "CIDR"},
		auditLog:     choiceValue{parse: nonEmptyPath, typ: "PATH"},
		auditRotate:  choiceValue{parse: policy.ParseAuditRotate, typ: "daily"},
	}
	fs.VarP(&f.configFile, "config", freeShorthand(fs, "c"), "read settings from the TOML `FILE`, or from standard input for -; flags given here override its scalars and add to its lists and grants. A FILE a sandbox can or could write is refused until moat trust FILE pins it")
	fs.Var(&f.isolation, "isolation", "how much of the host the sandbox sees: strict (system files only), default (plus toolchain files of the home), permissive (everything but protected paths) (default: default)")
	for _, s := range []struct {
		name  string
		p     **bool
		usage string
	}{
		{"protect-user-home", &f.security.ProtectUserHome, "keep the rest of the home unreadable; =false to lift it"},
		{"protect-credentials", &f.security.ProtectCredentials, "deny SSH and GnuPG keys, git, GitHub and Docker logins and service tokens; =false to lift it"},
		{"protect-shell-history", &f.security.ProtectShellHistory, "deny shell and REPL histories; =false to lift it"},
		{"protect-package-credentials", &f.security.ProtectPackageCredentials, "deny package-registry credentials (npm, PyPI, pip, Cargo, Maven...); =false to lift it"},
		{"protect-cloud-config", &f.security.ProtectCloudConfig, "deny AWS, Google Cloud, Azure, Kubernetes and similar configuration; =false to lift it"},
		{"protect-browser-data", &f.security.ProtectBrowserData, "deny browser profiles; =false to lift it"},
		{"protect-keychains", &f.security.ProtectKeychains, "deny keyrings, KWallet and pass; =false to lift it"},
		{"allow-gpu", &f.security.AllowGPU, "open the GPU devices; =false to close them"},
		{"allow-npu", &f.security.AllowNPU, "open NPU and other accelerator devices (/dev/accel*, Ascend, Neuron, VFIO...); =false to close them"},
		{"allow-hardware", &f.security.AllowHardware, "open USB, serial ports, cameras and audio devices; =false to close them"},
		{"allow-tcc-prompts", &f.security.AllowTCCPrompts, "macOS: let the sandbox ask for privacy permissions (camera, microphone...); nothing elsewhere"},
	} {
		fs.Var(optionalBool{s.p}, s.name, s.usage)
		fs.Lookup(s.name).NoOptDefVal = "true"
	}
	fs.Var(&f.network, "network", "network access: deny, allow-all (public hosts, through moat's proxy) or allow-list (only --allow-domain hosts) (default: deny)")
	fs.Var(&f.allowDomains, "allow-domain", "with --network allow-list, allow the host `PATTERN`: example.com, *.example.com (subdomains only) or an IP, optionally :PORT (repeatable)")
	fs.Var(&f.allowLocal, "allow-local", "let the proxy dial the private or loopback range `CIDR` (or one IP) that it refuses by default (repeatable)")
	fs.Var(&f.auditLog, "audit-log", "append one JSON line per network decision to `PATH` (needs --network allow-all or allow-list)")
	fs.Var(&f.auditRotate, "audit-rotate", "start a new audit file each day: --audit-log is then a directory, holding network-audit.YYYY-MM-DD.jsonl files, the last 30 kept")
	return f
}
