package sbpl

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Operation groups the profile uses.
const (
	opsRead  = "file-read*"
	opsWrite = "file-write*"
	opsLock  = "file-lock"
	opsExec  = "process-exec file-map-executable"
	// opsDeny is what a protected or denied path loses: every read and
	// write, running it, and making a new name for it. file-link and
	// file-clone are allowed nowhere (a hard link or clone of a protected
	// file into a writable place would be read there under its new name);
	// denying them here too says so where it matters.
	opsDeny = "file-read* file-write* file-link file-clone process-exec file-map-executable"
)

// Build writes the profile for in. It refuses an input without a working
// directory, a path it cannot name exactly ([CheckPath]) and a port out of
// range.
func Build(in Input) (Profile, error) {
	if err := check(&in); err != nil {
		return Profile{}, err
	}
	b := &builder{in: &in, keys: map[string]string{}}
	b.line("(version 1)")
	b.line("(deny default)")
	b.base()
	b.level()
	b.devices()
	b.execRoots()
	b.contested()
	b.writeXorExec()
	b.helper()
	b.ancestors()
	b.network()
	b.hardware()
	return Profile{Text: b.text.String(), Params: b.params}, nil
}

// check validates every path and number of in.
func check(in *Input) error {
	if in.WorkDir == "" {
		return errors.New("sbpl: no working directory")
	}
	if in.Level < LevelStrict || in.Level > LevelPermissive {
		return fmt.Errorf("sbpl: level %d: unknown", in.Level)
	}
	if in.ProxyPort < 0 || in.ProxyPort > 65535 {
		return fmt.Errorf("sbpl: proxy port %d: out of range", in.ProxyPort)
	}
	var paths []string
	add := func(p ...string) { paths = append(paths, p...) }
	add(in.WorkDir)
	add(in.Private...)
	add(in.Scratch...)
	for _, g := range in.Grants {
		add(g.Path)
	}
	add(in.HomeRead...)
	add(in.SharedTemp...)
	add(in.Protected...)
	add(in.Deny...)
	add(in.ReadOnly...)
	add(in.Sockets...)
	add(in.Terminals...)
	for _, s := range in.Seal {
		add(s.Dir)
		for _, k := range s.Keep {
			if !under(k, s.Dir) || k == s.Dir {
				return fmt.Errorf("sbpl: seal %q: kept entry %q is not inside it", s.Dir, k)
			}
		}
		add(s.Keep...)
	}
	for _, p := range []string{in.Home, in.HideHome, in.Helper} {
		if p != "" {
			add(p)
		}
	}
	for _, p := range paths {
		if err := CheckPath(p); err != nil {
			return err
		}
	}
	return nil
}

// builder accumulates the text and the parameters.
type builder struct {
	in     *Input
	text   strings.Builder
	params []Param
	keys   map[string]string // value -> key
}

func (b *builder) line(s string) {
	b.text.WriteString(s)
	b.text.WriteByte('\n')
}

func (b *builder) section(name string) {
	b.line("")
	b.line(";; " + name)
}

// rule writes one rule; a rule without filters applies everywhere.
func (b *builder) rule(action, ops string, filters ...string) {
	if len(filters) == 0 {
		b.line("(" + action + " " + ops + ")")
		return
	}
	b.line("(" + action + " " + ops)
	for i, f := range filters {
		end := ""
		if i == len(filters)-1 {
			end = ")"
		}
		b.line("    " + f + end)
	}
}

// param returns the parameter key for path p, making one named for role
// the first time p is seen.
func (b *builder) param(role, p string) string {
	if k, ok := b.keys[p]; ok {
		return k
	}
	k := role + "_" + strconv.Itoa(len(b.params))
	b.keys[p] = k
	b.params = append(b.params, Param{Key: k, Value: p})
	return k
}

// filters are kind (literal or subpath) filters for every alias of each
// path.
func (b *builder) filters(role, kind string, paths ...string) []string {
	var out []string
	for _, p := range paths {
		for _, a := range Aliases(p) {
			out = append(out, "("+kind+" (param "+mustQuote(b.param(role, a))+"))")
		}
	}
	return out
}

// constPaths are kind filters for every alias of constant paths, written
// in the text: they are this package's own.
func constPaths(kind string, paths ...string) []string {
	var out []string
	for _, p := range paths {
		out = append(out, consts(kind, Aliases(p)...)...)
	}
	return out
}

// consts are kind filters for constant strings.
func consts(kind string, vals ...string) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = "(" + kind + " " + mustQuote(v) + ")"
	}
	return out
}

// base writes what every process needs, none of it a file.
func (b *builder) base() {
	b.section("base: processes, sysctls, services")
	b.rule("allow", "process-fork")
	b.rule("allow", "signal", "(target same-sandbox)")
	b.rule("allow", "process-info*", "(target same-sandbox)")
	b.rule("allow", "sysctl-read", append(consts("sysctl-name", sysctlNames...), consts("sysctl-name-prefix", sysctlPrefixes...)...)...)
	b.rule("allow", "mach-lookup", consts("global-name", machServices...)...)
	// Preferences are shared through cfprefsd's segments; POSIX
	// semaphores (multiprocessing's locks) have names the sandbox picks.
	b.rule("allow", "ipc-posix-shm-read-data ipc-posix-shm-read-metadata", consts("ipc-posix-name-prefix", "apple.cfprefs.")...)
	b.rule("allow", "ipc-posix-shm*", consts("ipc-posix-name-prefix", "psm_", "__KMP_REGISTERED_LIB_")...)
	b.rule("allow", "ipc-posix-sem")
}

// level writes what the isolation level reads, writes and runs.
func (b *builder) level() {
	b.section("level: " + [...]string{"strict", "default", "permissive"}[b.in.Level])
	if b.in.Level == LevelPermissive {
		b.rule("allow", opsRead+" "+opsWrite+" "+opsLock+" "+opsExec)
	} else {
		// The system stays readable at every level: its runtime layout
		// (dyld caches, cryptexes, the sealed volume) is not stably
		// enumerable. User data and shared temp are not.
		b.rule("allow", opsRead)
		b.rule("deny", opsRead+" "+opsWrite+" "+opsExec, constPaths("subpath", append(append([]string(nil), userDataRoots...), SharedTempDirs...)...)...)
	}
	// Devices are denied as a whole (a raw disk is "readable" for root)
	// and the few a process needs are allowed again below.
	b.rule("deny", opsRead+" "+opsWrite+" "+opsExec, consts("subpath", "/dev")...)
}

// devices writes the devices every process may use: the byte sinks and
// sources, its own descriptors, its inherited terminals.
func (b *builder) devices() {
	b.section("devices")
	b.rule("allow", opsRead, append(consts("literal", readDevices...), consts("subpath", "/dev/fd")...)...)
	b.rule("allow", "file-write-data", append(consts("literal", writeDevices...), consts("subpath", "/dev/fd")...)...)
	b.rule("allow", "file-read-metadata", consts("literal", "/dev")...)
	if len(b.in.Terminals) > 0 {
		b.rule("allow", opsRead+" file-write-data", b.filters("TERMINAL", "literal", b.in.Terminals...)...)
		if b.in.TTYIoctl {
			b.rule("allow", "file-ioctl", b.filters("TERMINAL", "literal", b.in.Terminals...)...)
		}
	}
}

// execRoots writes the system directories whose files run, below
// permissive (where everything does).
func (b *builder) execRoots() {
	if b.in.Level == LevelPermissive {
		return
	}
	b.section("executable system directories")
	b.rule("allow", opsExec, constPaths("subpath", systemExec...)...)
}

// entry is one contested path: allowed or denied, for one depth.
type entry struct {
	path  string
	role  string
	kind  string // literal or subpath
	allow bool
	ops   string
	seal  *Seal
	order int // deny 0, read-only 1, seal 2, allow 3 at one path depth
}

// contested writes the paths whose access depends on which is the most
// specific: sorted by depth, a deny first at each depth.
func (b *builder) contested() {
	in := b.in
	var es []entry
	allow := func(role, kind string, ops string, paths ...string) {
		for _, p := range paths {
			es = append(es, entry{path: p, role: role, kind: kind, allow: true, ops: ops, order: 3})
		}
	}
	deny := func(role, ops string, order int, paths ...string) {
		for _, p := range paths {
			es = append(es, entry{path: p, role: role, kind: "subpath", ops: ops, order: order})
		}
	}
	rw := opsRead + " " + opsWrite + " " + opsLock
	allow("WORKDIR", "subpath", rw, in.WorkDir)
	allow("PRIVATE", "subpath", rw, in.Private...)
	allow("SCRATCH", "subpath", rw+" "+opsExec, in.Scratch...)
	allow("HOMEREAD", "subpath", opsRead+" "+opsExec, in.HomeRead...)
	if in.Level == LevelDefault {
		allow("SHAREDTEMP", "literal", opsRead, in.SharedTemp...)
	}
	for _, g := range in.Grants {
		ops := opsRead
		if g.Write {
			ops += " " + opsWrite + " " + opsLock
		}
		if g.Exec {
			ops += " " + opsExec
		}
		kind := "literal"
		if g.Dir {
			kind = "subpath"
		}
		allow("GRANT", kind, ops, g.Path)
	}
	deny("PROTECTED", opsDeny, 0, in.Protected...)
	deny("DENY", opsDeny, 0, in.Deny...)
	if in.HideHome != "" {
		deny("HIDDENHOME", opsDeny, 0, in.HideHome)
	}
	if in.Home != "" && !in.AllowTCCPrompts {
		for _, f := range tccFolders {
			deny("CONSENT", opsDeny, 0, filepath.Join(in.Home, f))
		}
	}
	deny("READONLY", opsWrite, 1, in.ReadOnly...)
	for i := range in.Seal {
		es = append(es, entry{path: in.Seal[i].Dir, role: "SEAL", seal: &in.Seal[i], order: 2})
	}
	sort.SliceStable(es, func(i, j int) bool {
		di, dj := depth(es[i].path), depth(es[j].path)
		if di != dj {
			return di < dj
		}
		return es[i].order < es[j].order
	})
	b.section("paths, most specific last: the working directory, private directories, grants, protections")
	for _, e := range es {
		switch {
		case e.seal != nil:
			b.sealRule(e.seal)
		case e.allow:
			b.rule("allow", e.ops, b.filters(e.role, e.kind, e.path)...)
		default:
			b.rule("deny", e.ops, b.filters(e.role, e.kind, e.path)...)
		}
	}
}

// sealRule denies everything in a sealed directory but the directory
// itself and the entries kept.
func (b *builder) sealRule(s *Seal) {
	var alts []string
	for _, a := range Aliases(s.Dir) {
		parts := []string{
			"(subpath (param " + mustQuote(b.param("SEAL", a)) + "))",
			"(require-not (literal (param " + mustQuote(b.param("SEAL", a)) + ")))",
		}
		for _, k := range s.Keep {
			ka := a + strings.TrimPrefix(k, s.Dir)
			parts = append(parts, "(require-not (subpath (param "+mustQuote(b.param("SEALKEEP", ka))+")))")
		}
		alts = append(alts, "(require-all "+strings.Join(parts, " ")+")")
	}
	b.rule("deny", opsRead+" "+opsWrite, alts...)
}

// depth counts a path's components.
func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// writeXorExec denies running or mapping anything writable or in shared
// temp, then allows again the explicit exceptions, last.
func (b *builder) writeXorExec() {
	in := b.in
	var writable []string
	if !in.ExecWorkDir {
		writable = append(writable, in.WorkDir)
	}
	writable = append(writable, in.Private...)
	var fileGrants []string
	for _, g := range in.Grants {
		if g.Write && !g.Exec {
			if g.Dir {
				writable = append(writable, g.Path)
			} else {
				fileGrants = append(fileGrants, g.Path)
			}
		}
	}
	b.section("nothing writable is executable")
	denied := append(b.filters("NOEXEC", "subpath", writable...), constPaths("subpath", SharedTempDirs...)...)
	denied = append(denied, b.filters("NOEXEC", "literal", fileGrants...)...)
	b.rule("deny", opsExec, denied...)

	var again []string
	var againFiles []string
	if in.ExecWorkDir {
		again = append(again, in.WorkDir)
	}
	again = append(again, in.Scratch...)
	for _, g := range in.Grants {
		if g.Write && g.Exec {
			if g.Dir {
				again = append(again, g.Path)
			} else {
				againFiles = append(againFiles, g.Path)
			}
		}
	}
	if len(again)+len(againFiles) == 0 {
		return
	}
	b.section("explicitly writable and executable: rwx grants, build mode")
	b.rule("allow", opsExec, append(b.filters("RWX", "subpath", again...), b.filters("RWX", "literal", againFiles...)...)...)
	// A protected or denied path inside one of them stays unrunnable.
	var inside []string
	for _, p := range append(append([]string(nil), in.Protected...), in.Deny...) {
		for _, r := range append(append([]string(nil), again...), againFiles...) {
			if under(p, r) && p != r {
				inside = append(inside, p)
				break
			}
		}
	}
	if len(inside) > 0 {
		b.rule("deny", opsExec, b.filters("NOEXEC", "subpath", inside...)...)
	}
}

// helper lets sandbox-exec run moat's helper, which it can never change.
func (b *builder) helper() {
	if b.in.Helper == "" {
		return
	}
	b.section("moat's helper: runs, never written")
	b.rule("allow", opsRead+" "+opsExec, b.filters("HELPER", "literal", b.in.Helper)...)
	b.rule("deny", opsWrite+" file-link file-clone", b.filters("HELPER", "literal", b.in.Helper)...)
}

// ancestors lets path resolution, realpath and getcwd stat every
// directory above an allowed path, without listing it.
func (b *builder) ancestors() {
	in := b.in
	roots := []string{in.WorkDir}
	roots = append(roots, in.Private...)
	roots = append(roots, in.Scratch...)
	roots = append(roots, in.HomeRead...)
	for _, g := range in.Grants {
		roots = append(roots, g.Path)
	}
	if in.Level == LevelDefault {
		roots = append(roots, in.SharedTemp...)
	}
	roots = append(roots, in.Sockets...)
	if in.Helper != "" {
		roots = append(roots, in.Helper)
	}
	seen := map[string]bool{}
	var list []string
	for _, r := range roots {
		for d := filepath.Dir(r); ; d = filepath.Dir(d) {
			if !seen[d] {
				seen[d] = true
				list = append(list, d)
			}
			if d == "/" {
				break
			}
		}
	}
	sort.Strings(list)
	b.section("directories above allowed paths: metadata only")
	b.rule("allow", "file-read-metadata", b.filters("PARENT", "literal", list...)...)
}

// network writes how the sandbox reaches the network: not at all, the
// proxy's loopback port only, or the host's network.
func (b *builder) network() {
	in := b.in
	b.section("network")
	// Unix sockets the sandbox binds in its own directories.
	own := append(append([]string(nil), in.Private...), in.Scratch...)
	if len(own) > 0 {
		b.rule("allow", "network-bind network-outbound", b.filters("PRIVATE", "subpath", own...)...)
	}
	if len(in.Sockets) > 0 {
		b.rule("allow", "network-outbound", b.filters("SOCKET", "literal", in.Sockets...)...)
		b.rule("allow", opsRead+" file-write-data", b.filters("SOCKET", "literal", in.Sockets...)...)
	}
	switch {
	case in.HostNetwork:
		b.rule("allow", "network-outbound", `(remote ip "*:*")`)
		b.rule("allow", "network-bind network-inbound", `(local ip "*:*")`)
		b.rule("allow", "network-outbound", consts("literal", "/private/var/run/mDNSResponder")...)
		b.rule("allow", "system-socket")
		b.rule("allow", "mach-lookup", consts("global-name", append(append([]string(nil), networkServices...),
			"com.apple.dnssd.service", "com.apple.networkd", "com.apple.SystemConfiguration.configd",
			"com.apple.SystemConfiguration.DNSConfiguration")...)...)
	case in.ProxyPort > 0:
		b.rule("allow", "network-outbound", `(remote ip "localhost:`+strconv.Itoa(in.ProxyPort)+`")`)
		b.rule("allow", "mach-lookup", consts("global-name", networkServices...)...)
	default:
		b.line(";; none: no IP network, loopback included")
	}
}

// hardware writes the device access the switches allow.
func (b *builder) hardware() {
	in := b.in
	if !in.AllowGPU && !in.AllowNPU && !in.AllowHardware {
		return
	}
	b.section("hardware")
	if in.AllowHardware {
		b.rule("allow", "iokit-open")
		b.rule("allow", opsRead+" file-write-data file-ioctl", "(regex #\""+serialRegex+"\")")
		b.rule("allow", "mach-lookup", consts("global-name", "com.apple.audio.coreaudiod", "com.apple.audio.audiohald", "com.apple.cmio.registerassistantservice")...)
	}
	if in.AllowGPU {
		b.rule("allow", "iokit-open", consts("iokit-user-client-class", gpuClasses...)...)
		b.rule("allow", "mach-lookup", consts("global-name", gpuServices...)...)
	}
	if in.AllowNPU {
		b.rule("allow", "iokit-open", consts("iokit-user-client-class", npuClasses...)...)
		b.rule("allow", "mach-lookup", consts("global-name", npuServices...)...)
	}
}
