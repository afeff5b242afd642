package windows

import (
	"errors"
	"io/fs"
	"strconv"
	"strings"

	"github.com/moat-sandbox/moat/internal/aclplan"
	"github.com/moat-sandbox/moat/internal/spec"
)

// SettingError is a setting that the Windows backend cannot honour in
// any enforcement mode, so that the sandbox is refused rather than run
// more restricted, or more open, than asked. Package moat turns it into
// its own UnsupportedSettingError. The zero value names nothing.
type SettingError struct {
	// Setting and Value are what was asked: "isolation" "permissive".
	Setting, Value string
	// Reason says why Windows cannot, and what to do instead.
	Reason string
}

// Error returns the one-line message.
func (e *SettingError) Error() string {
	return "" + e.Setting + " " + e.Value + ": not available on windows: " + e.Reason
}

// ProfileName is the AppContainer profile name of sandbox id: unique per
// sandbox (the id is random), of the letters, digits and dots a profile
// name may hold, and at most 64 characters.
func ProfileName(id string) string {
	var b strings.Builder
	b.WriteString("moat.sandbox.")
	for _, r := range strings.ToLower(id) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	s := b.String()
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}

// The capability SIDs a host-network sandbox holds (well-known,
// S-1-15-3-N): internetClient, internetClientServer and
// privateNetworkClientServer. A sandbox without them has no network.
var hostNetworkCapabilities = []string{"S-1-15-3-1", "S-1-15-3-2", "S-1-15-3-3"}

// The PROCESS_CREATION_MITIGATION_POLICY_* flags the backend uses.
const (
	mitigationExtensionPointDisable = 1 << 32 // no AppInit and other legacy extension DLLs
	mitigationNoRemoteImages        = 1 << 52 // no images from remote (UNC) paths
	mitigationNoLowLabelImages      = 1 << 56 // no images labelled low integrity
)

// MitigationPolicy is the mitigation policy of a command's first process:
// no legacy extension-point DLLs, no images from remote paths and, unless
// p lets the sandbox run what it writes (build mode, scratch or an rwx
// grant), no images labelled low integrity, which every file the
// container writes is: a DLL written in the sandbox cannot be loaded into
// it, whatever access list its creator gave it. Windows applies the
// policy to that process, not to the processes it starts.
func MitigationPolicy(p *spec.Policy) uint64 {
	m := uint64(mitigationExtensionPointDisable | mitigationNoRemoteImages)
	runsWritten := p.ExecWorkDir || len(p.Scratch) > 0
	for _, g := range p.Grants {
		runsWritten = runsWritten || (g.Write && g.Exec)
	}
	if !runsWritten {
		m |= mitigationNoLowLabelImages
	}
	return m
}

// Capabilities are the capability SIDs the container is created with:
// none, so no network at all, unless p asks for the host's network.
func Capabilities(p *spec.Policy) []string {
	if p.HostNetwork {
		return hostNetworkCapabilities
	}
	return nil
}

// Check refuses what no enforcement mode can run: permissive isolation,
// which an AppContainer cannot give (it cannot make the whole filesystem
// writable), and a network policy with a proxy, which the container
// reaches only through a loopback exemption, which only an administrator
// may add (elevated says whether this process is one).
func Check(p *spec.Policy, elevated bool) error {
	if p.WorkDir == "" {
		return errors.New("windows: no working directory")
	}
	if p.Level == spec.LevelPermissive {
		return &SettingError{Setting: "isolation", Value: "permissive",
			Reason: "an AppContainer cannot make the whole filesystem writable; use default or strict isolation, with grants"}
	}
	if p.Network.ProxyPort != 0 && !elevated {
		return &SettingError{Setting: "network", Value: "proxy",
			Reason: "an AppContainer reaches the policy proxy on 127.0.0.1:" + strconv.Itoa(p.Network.ProxyPort) +
				" only through a loopback exemption, and adding one needs an administrator: run moat elevated, or use the deny-all network policy"}
	}
	return nil
}

// Missing is what Strict enforcement refuses on Windows, given p: each
// item names the part of the policy and why Windows cannot hold it.
func Missing(p *spec.Policy) []string {
	var m []string
	if !p.ExecWorkDir {
		// Access entries make nothing the container finds, or writes
		// with the inherited entries, executable; but the creator of a
		// file may give it an access list of its own, and NTFS then lets
		// it run. Build mode gives the guarantee up anyway.
		m = append(m, "windows: write-xor-execute: a process in an AppContainer can create a file with an access list of its own that lets it run")
	}
	if p.IOPriority != 0 {
		m = append(m, "windows: io priority: there is no documented way to lower another process's I/O priority")
	}
	if len(p.Sockets) > 0 {
		m = append(m, "windows: sockets: host Unix sockets are not granted to an AppContainer yet")
	}
	if len(p.FS.Seal) > 0 {
		m = append(m, "windows: seal: new entries of a directory cannot be kept from an AppContainer")
	}
	if len(p.FS.Virtual) > 0 {
		m = append(m, "windows: virtual files: there is no private mount namespace to show them in")
	}
	if p.AllowNPU || p.AllowHardware {
		m = append(m, "windows: devices: NPUs and peripherals need device capabilities, which moat does not grant")
	}
	if len(p.View.SharedTemp) > 0 {
		m = append(m, "windows: shared temp: the user's temp directory is not shown to the container")
	}
	if p.HostNetwork && len(p.Network.DenyTCPPorts) > 0 {
		m = append(m, "windows: deny tcp connect: an AppContainer on the host's network cannot be kept from given ports")
	}
	return m
}

// Gaps are what a Windows sandbox is exposed to, or lacks, whatever the
// enforcement: limits Windows has no counterpart for, and what the
// container reaches by design.
func Gaps(p *spec.Policy) []string {
	var g []string
	if p.Limits.FileSizeBytes > 0 {
		g = append(g, "windows: file size: no per-process limit; not enforced")
	}
	if p.Limits.OpenFiles > 0 {
		g = append(g, "windows: open files: no per-process handle limit; not enforced")
	}
	if !p.AllowGPU {
		g = append(g, "windows: GPU: an AppContainer reaches the GPU through DirectX; not withheld")
	}
	if p.HostNetwork {
		g = append(g, "windows: host network: the host's loopback stays unreachable without a loopback exemption")
	}
	if p.Network.ProxyPort != 0 {
		g = append(g, "windows: proxy: the loopback exemption opens every loopback port of the host to the container, not only the proxy's")
	}
	return g
}

// Stat says whether path exists and its kind; an error matching
// fs.ErrNotExist means it does not, any other error that it may not be
// planned. A nil Stat is not usable.
type Stat func(path string) (aclplan.Kind, error)

// PlanInput is the planner's input for p: every path checked with stat,
// its kind recorded; containerFolder is the AppContainer's own folder. A
// missing grant or working directory is an error; a protected or level
// path that is missing needs nothing; a Deny or ReadOnly path that is
// missing under a writable place is returned in missing, because the
// container could create it.
func PlanInput(p *spec.Policy, stat Stat, containerFolder string) (in aclplan.Input, missing []string, err error) {
	in = aclplan.Input{WorkDir: p.WorkDir, ExecWorkDir: p.ExecWorkDir, Scratch: p.Scratch, ContainerFolder: containerFolder}
	if _, err := stat(p.WorkDir); err != nil {
		return in, nil, errors.New("workdir " + strconvQuote(p.WorkDir) + ": " + err.Error())
	}
	writable := []string{p.WorkDir}
	writable = append(writable, p.Scratch...)
	for _, g := range p.Grants {
		k, err := stat(g.Path)
		if err != nil {
			return in, nil, errors.New("grant " + strconvQuote(g.Path) + ": " + err.Error())
		}
		in.Grants = append(in.Grants, aclplan.Grant{Object: aclplan.Object{Path: g.Path, Kind: k}, Write: g.Write, Exec: g.Exec})
		if g.Write {
			writable = append(writable, g.Path)
		}
	}
	for _, d := range []string{p.Private.Tmp, p.Private.VarTmp, p.Private.Home} {
		if d == "" {
			continue
		}
		if k, err := stat(d); err == nil && k == aclplan.Dir {
			in.Private = append(in.Private, d)
			writable = append(writable, d)
		}
	}
	existing := func(paths []string) []aclplan.Object {
		var out []aclplan.Object
		for _, path := range paths {
			if k, err := stat(path); err == nil {
				out = append(out, aclplan.Object{Path: path, Kind: k})
			}
		}
		return out
	}
	in.HomeRead = existing(p.View.HomeRead)
	in.Protected = existing(p.View.Protected)
	in.Deny = existing(p.FS.Deny)
	in.ReadOnly = existing(p.FS.ReadOnly)
	for _, l := range []struct {
		what  string
		paths []string
	}{{"deny", p.FS.Deny}, {"read-only", p.FS.ReadOnly}} {
		for _, path := range l.paths {
			if _, err := stat(path); !errors.Is(err, fs.ErrNotExist) {
				continue
			}
			for _, w := range writable {
				if cp, err1 := aclplan.Canonical(path); err1 == nil {
					if cw, err2 := aclplan.Canonical(w); err2 == nil && aclplan.Under(cp, cw) {
						missing = append(missing, "windows: "+l.what+" "+strconvQuote(path)+": does not exist, and the container could create it")
						break
					}
				}
			}
		}
	}
	return in, missing, nil
}

// ExecRoots are the paths under which the container may run programs:
// the system directories, which every AppContainer may read and execute
// (system), the executable grants, the level's home toolchains, build
// mode's scratch and, in build mode, the working directory.
func ExecRoots(p *spec.Policy, system []string) []string {
	roots := append([]string(nil), system...)
	for _, g := range p.Grants {
		if g.Exec {
			roots = append(roots, g.Path)
		}
	}
	roots = append(roots, p.View.HomeRead...)
	roots = append(roots, p.Scratch...)
	if p.ExecWorkDir {
		roots = append(roots, p.WorkDir)
	}
	return roots
}

// Layers are the report's layers for p, given how many access entries
// the plan holds and whether the job's UI restrictions took.
func Layers(p *spec.Policy, entries int, uiRestricted bool) []spec.Layer {
	net := spec.Layer{Name: "network", Active: true, Detail: "no capabilities: no network at all"}
	switch {
	case p.HostNetwork:
		net.Detail = "host network (internetClient, internetClientServer, privateNetworkClientServer)"
	case p.Network.ProxyPort != 0:
		net.Detail = "loopback exemption for the policy proxy on 127.0.0.1:" + strconv.Itoa(p.Network.ProxyPort) + "; no other capability"
	}
	wx := spec.Layer{Name: "write-xor-execute", Active: false,
		Detail: "nothing the container writes inherits execute, and no DLL it wrote loads into the first process; but a file given an access list of its own by its creator runs"}
	if p.ExecWorkDir {
		wx.Detail = "given up by build mode for the working directory; " + wx.Detail
	}
	return []spec.Layer{
		{Name: "appcontainer", Active: true, Detail: "profile " + ProfileName(p.ID) + ": a token that reaches only what names its SID"},
		{Name: "filesystem", Active: true, Detail: strconv.Itoa(entries) + " access entries for the container's SID, revoked at Close"},
		{Name: "job object", Active: true, Detail: "kills the tree on Close; memory, process and CPU-time limits; priority class"},
		{Name: "ui restrictions", Active: uiRestricted, Detail: "no other desktops, windows, clipboard, global atoms or system parameters"},
		net,
		wx,
	}
}
