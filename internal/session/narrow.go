package session

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/hostfacts"
	"github.com/moat-sandbox/moat/policy"
)

// narrow applies a client's narrowing n to the pinned policy r and returns
// the narrowed copy; r itself is never changed. Anything that would give
// the session more than r is an *Error with CodeWiden naming the setting;
// a malformed value is CodeBadRequest.
func narrow(r policy.Result, n Narrowing) (policy.Result, error) {
	out := r
	out.Grants = slices.Clone(r.Grants)
	out.Network.AllowDomains = slices.Clone(r.Network.AllowDomains)
	out.Network.AllowLocal = slices.Clone(r.Network.AllowLocal)
	if err := narrowNetwork(&out.Network, n); err != nil {
		return policy.Result{}, err
	}
	grants, err := narrowGrants(out.Grants, n.Grants)
	if err != nil {
		return policy.Result{}, err
	}
	out.Grants = grants
	if err := narrowLimits(&out.Config.Limits, n.Limits, r.WorkDir); err != nil {
		return policy.Result{}, err
	}
	if err := narrowIsolation(&out.Config, n.Isolation); err != nil {
		return policy.Result{}, err
	}
	if n.NoBuild {
		out.Config.Build = false
	}
	return out, nil
}

// narrowNetwork applies n's network settings to net.
func narrowNetwork(net *policy.Network, n Narrowing) error {
	mode := net.Mode
	if mode == "" {
		mode = policy.NetworkDeny
	}
	switch n.Network {
	case "":
		if len(n.AllowDomains) > 0 {
			return settingErrorf(CodeBadRequest, "network", `allow_domains needs "network": "allow-list"`)
		}
		return nil
	case policy.NetworkDeny:
		if len(n.AllowDomains) > 0 {
			return settingErrorf(CodeBadRequest, "network", `allow_domains needs "network": "allow-list", not "deny"`)
		}
		*net = policy.Network{Mode: policy.NetworkDeny}
		return nil
	case policy.NetworkAllowList:
	default:
		return settingErrorf(CodeBadRequest, "network", "narrow.network %q: want \"deny\" or \"allow-list\"", n.Network)
	}
	if len(n.AllowDomains) == 0 {
		return settingErrorf(CodeBadRequest, "network", `"network": "allow-list" needs at least one of allow_domains`)
	}
	if mode == policy.NetworkDeny {
		return settingErrorf(CodeWiden, "network", "the policy allows no network; a session may only narrow it, so ask for no network setting or \"deny\"")
	}
	var kept []string
	for _, d := range n.AllowDomains {
		nd, err := policy.ParseDomain(d)
		if err != nil {
			return settingErrorf(CodeBadRequest, "network", "narrow.allow_domains %q: %v", d, err)
		}
		if mode == policy.NetworkAllowList && !slices.ContainsFunc(net.AllowDomains, func(p string) bool { return domainCovers(p, nd) }) {
			return settingErrorf(CodeWiden, "network", "narrow.allow_domains %q: the policy's allow list does not allow it; allowed: %q", d, net.AllowDomains)
		}
		if !slices.Contains(kept, nd) {
			kept = append(kept, nd)
		}
	}
	net.Mode, net.AllowDomains = policy.NetworkAllowList, kept
	return nil
}

// domainCovers says whether the policy's allow-list pattern p allows
// everything the normalized pattern d allows: the same host, or a host (or
// wildcard) under p's wildcard, on p's port or, when p names none, any.
func domainCovers(p, d string) bool {
	ph, pp := splitPort(p)
	dh, dp := splitPort(d)
	if pp != "" && pp != dp {
		return false
	}
	if ph == dh {
		return true
	}
	suffix, ok := strings.CutPrefix(ph, "*")
	return ok && strings.HasPrefix(suffix, ".") && strings.HasSuffix(dh, suffix) && len(dh) > len(suffix)
}

// splitPort splits a normalized pattern into host and port ("" for none):
// "[::1]:80", "example.com:443", "::1".
func splitPort(s string) (host, port string) {
	if strings.HasPrefix(s, "[") {
		if i := strings.Index(s, "]"); i > 0 {
			return s[1:i], strings.TrimPrefix(s[i+1:], ":")
		}
		return s, ""
	}
	if strings.Count(s, ":") == 1 {
		h, p, _ := strings.Cut(s, ":")
		return h, p
	}
	return s, ""
}

// narrowGrants keeps, of the policy's grants, what want names: "none"
// drops a grant, "r", "rw", "rx" or "rwx" keeps that much of its access.
// A key is one of the policy's grant paths, absolute; an access moat
// could not enforce exactly as written (such as "w", which would still
// allow reading) is refused.
func narrowGrants(grants []moat.PathRequest, want map[string]string) ([]moat.PathRequest, error) {
	if len(want) == 0 {
		return grants, nil
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the first error is the same every time
	drop := map[int]bool{}
	for _, k := range keys {
		if !filepath.IsAbs(k) {
			return nil, settingErrorf(CodeBadRequest, "grants", "narrow.grants %q: not an absolute path; name one of the policy's grant paths as absolute: %s", bounded(k), grantPaths(grants))
		}
		v := want[k]
		a, ok := narrowAccess[v]
		if !ok && v != "none" {
			return nil, settingErrorf(CodeBadRequest, "grants", "narrow.grants %q: access %q: want one of \"none\", \"r\", \"rw\", \"rx\", \"rwx\" (writing and executing each imply reading)", bounded(k), bounded(v))
		}
		i := slices.IndexFunc(grants, func(g moat.PathRequest) bool { return samePath(g.Path, k) })
		if i < 0 {
			return nil, settingErrorf(CodeWiden, "grants", "narrow.grants %q: the policy grants no such path; a session may only narrow the policy's grants: %s", bounded(k), grantPaths(grants))
		}
		if v == "none" {
			drop[i] = true
			continue
		}
		have := grants[i].Access
		if have&(moat.WRITE|moat.EXEC) != 0 {
			have |= moat.READ
		}
		if a&^have != 0 {
			return nil, settingErrorf(CodeWiden, "grants", "narrow.grants %q: %q asks for more than the policy's %q", bounded(k), v, have.String())
		}
		grants[i].Access = a
	}
	out := grants[:0]
	for i, g := range grants {
		if !drop[i] {
			out = append(out, g)
		}
	}
	return out, nil
}

// narrowAccess is every access a narrowing may keep, as it is spelled:
// each means exactly what moat enforces for it.
var narrowAccess = map[string]moat.Access{
	"r":   moat.READ,
	"rw":  moat.READ | moat.WRITE,
	"rx":  moat.READ | moat.EXEC,
	"rwx": moat.READ | moat.WRITE | moat.EXEC,
}

// samePath says whether the client's absolute key names the grant path g
// (as written in the policy, made absolute if it is not).
func samePath(g, key string) bool {
	key = filepath.Clean(key)
	if !filepath.IsAbs(g) {
		ag, err := filepath.Abs(g)
		if err != nil {
			return false
		}
		g = ag
	}
	return filepath.Clean(g) == key
}

// grantPaths lists the policy's grant paths for an error message, at most
// maxListed of them.
func grantPaths(grants []moat.PathRequest) string {
	const maxListed = 16
	if len(grants) == 0 {
		return "the policy has none"
	}
	var b strings.Builder
	for i, g := range grants {
		if i == maxListed {
			fmt.Fprintf(&b, " and %d more", len(grants)-maxListed)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", g.Path)
	}
	return b.String()
}

// bounded cuts a client's string for an error message.
func bounded(s string) string {
	const max = 200
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}

// narrowLimits lowers l by n. A policy's zero is moat's default, negative
// unlimited; each requested value must be positive and at most the
// policy's effective value.
func narrowLimits(l *moat.Limits, n NarrowLimits, workDir string) error {
	type lim struct {
		name, setting string
		have          *int64
		want          int64
		def           func() int64 // moat's default for a zero; 0 = none
	}
	timeout := int64(l.Timeout / time.Millisecond)
	list := []lim{
		{"memory_bytes", "limits.max-memory", &l.MemoryBytes, n.MemoryBytes, hostfacts.HalfMemory},
		{"processes", "limits.max-processes", &l.Processes, n.Processes, func() int64 { return moat.DefaultProcesses }},
		{"disk_bytes", "limits.max-disk", &l.DiskBytes, n.DiskBytes, func() int64 { return defaultDisk(workDir) }},
		{"file_size_bytes", "limits.max-file-size", &l.FileSizeBytes, n.FileSizeBytes, func() int64 { return moat.DefaultFileSizeBytes }},
		{"cpu_seconds", "limits.max-cpu-time", &l.CPUSeconds, n.CPUSeconds, nil},
		{"timeout_ms", "limits.timeout", &timeout, n.TimeoutMS, nil},
	}
	for _, x := range list {
		switch {
		case x.want == 0:
			continue
		case x.want < 0:
			return settingErrorf(CodeBadRequest, x.setting, "narrow.limits.%s %d: want a positive value, or leave it out to keep the policy's", x.name, x.want)
		}
		have := *x.have
		if have == 0 && x.def != nil {
			have = x.def()
		}
		if have > 0 && x.want > have {
			return settingErrorf(CodeWiden, x.setting, "narrow.limits.%s %d: above the policy's %d; a session may only lower a limit", x.name, x.want, have)
		}
		*x.have = x.want
	}
	if n.TimeoutMS > 0 {
		l.Timeout = time.Duration(timeout) * time.Millisecond
	}
	return nil
}

// defaultDisk is what moat's default disk limit would give, about: half
// the space free where the working directory lies (the system temporary
// directory for a fresh one); 1 byte when it cannot be measured, so that
// no request passes for narrower than an unknown default.
func defaultDisk(workDir string) int64 {
	dir := workDir
	if dir == "" {
		dir = os.TempDir()
	}
	free, err := hostfacts.FreeBytes(dir)
	if err != nil || free <= 0 {
		return 1
	}
	return free / 2
}

// narrowIsolation makes the isolation level stricter, never looser. The
// policy's protections are kept as they are.
func narrowIsolation(cfg *moat.Config, want string) error {
	var iso moat.Isolation
	switch want {
	case "":
		return nil
	case "strict":
		iso = moat.IsolationStrict
	case "default":
		iso = moat.IsolationDefault
	default:
		return settingErrorf(CodeBadRequest, "isolation", "narrow.isolation %q: want \"strict\" or \"default\"", want)
	}
	if iso > cfg.Isolation {
		return settingErrorf(CodeWiden, "isolation", "narrow.isolation %q: looser than the policy's %q", want, cfg.Isolation.String())
	}
	cfg.Isolation = iso
	return nil
}
