package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/moat-sandbox/moat"
)

// doctorReport is everything moat doctor finds. Its JSON keys are stable:
// scripts read them.
type doctorReport struct {
	OS   string `json:"os"`
	Arch string `json:"arch"`
	// Kernel is the kernel release and Machine its architecture, as
	// uname -r and uname -m print them.
	Kernel  string `json:"kernel"`
	Machine string `json:"machine"`
	Root    bool   `json:"root"`

	Landlock       landlockCheck `json:"landlock"`
	Seccomp        check         `json:"seccomp"`
	UserNamespaces check         `json:"user_namespaces"`
	Cgroup         cgroupCheck   `json:"cgroup"`

	// Enforcement is what a best-effort sandbox enforces on this host.
	Enforcement enforcement `json:"enforcement"`
	// NetworkProxy says how a sandbox with a network policy reaches its
	// proxy here, and what holds everything else back.
	NetworkProxy layer `json:"network_proxy"`
	// Strict says whether the default, strict policy works here.
	Strict strictCheck `json:"strict"`
}

// check is one host feature: whether it is there, what was found, and how
// to get it when it is not.
type check struct {
	Available bool   `json:"available"`
	Detail    string `json:"detail"`
	Fix       string `json:"fix"`
}

// landlockCheck is a check with the Landlock ABI version, 0 when none.
type landlockCheck struct {
	check
	ABI int `json:"abi"`
}

// cgroupCheck is what the cgroup hierarchies offer this process.
type cgroupCheck struct {
	V2Mount       string            `json:"v2_mount"`
	V2Controllers []string          `json:"v2_controllers"`
	V1Controllers map[string]string `json:"v1_controllers"`
	// Memory, Pids and CPU name the hierarchy ("v2", "v1") that would
	// hold that limit, "" if none.
	Memory   string `json:"memory"`
	Pids     string `json:"pids"`
	CPU      string `json:"cpu"`
	Kill     string `json:"kill"`
	Writable bool   `json:"writable"`
	Reason   string `json:"reason"`
	Fix      string `json:"fix"`
}

// enforcement is a moat.Report, or why none could be made.
type enforcement struct {
	Platform string   `json:"platform"`
	Mode     string   `json:"mode"`
	Layers   []layer  `json:"layers"`
	Gaps     []string `json:"gaps"`
	Error    string   `json:"error"`
}

// layer is a moat.Layer.
type layer struct {
	Name   string `json:"name"`
	Active bool   `json:"active"`
	Detail string `json:"detail"`
}

// strictCheck says whether moat.New(moat.Config{}) succeeds.
type strictCheck struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

// newDoctorCmd builds "moat doctor".
func newDoctorCmd(std stdio) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "doctor [--json]",
		Short: "Check what moat can enforce on this host",
		Long: `Check what this host offers the sandbox, what moat will enforce here, and
how to get what is missing. Exit status 0 means the default, strict policy
works; 1 means moat run needs --best-effort on this host.`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			r := diagnose()
			var err error
			if asJSON {
				err = writeJSON(std.out, r)
			} else {
				err = writeText(std.out, r)
			}
			if err != nil {
				return failf("doctor: %v", err)
			}
			if !r.Strict.OK {
				return &exitStatus{code: 1}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON object instead of text")
	return c
}

// diagnose probes the host and tries the sandboxes moat would build.
func diagnose() doctorReport {
	r := probeHost()
	r.OS, r.Arch = runtime.GOOS, runtime.GOARCH
	r.Enforcement = bestEffortReport()
	r.NetworkProxy = proxyReport()
	r.Strict = strictWorks()
	if r.Cgroup.V2Controllers == nil {
		r.Cgroup.V2Controllers = []string{}
	}
	if r.Cgroup.V1Controllers == nil {
		r.Cgroup.V1Controllers = map[string]string{}
	}
	return r
}

// bestEffortReport creates a best-effort sandbox and reports its layers.
func bestEffortReport() enforcement {
	e := enforcement{Platform: runtime.GOOS, Mode: moat.BestEffort.String(), Layers: []layer{}, Gaps: []string{}}
	sb, err := moat.New(moat.Config{Enforcement: moat.BestEffort})
	if err != nil {
		e.Error = strings.TrimPrefix(err.Error(), "moat: ")
		return e
	}
	defer sb.Close()
	rep := sb.Report()
	e.Platform, e.Mode = rep.Platform, rep.Enforcement.String()
	for _, l := range rep.Layers {
		e.Layers = append(e.Layers, layer{Name: l.Name, Active: l.Active, Detail: l.Detail})
	}
	e.Gaps = append(e.Gaps, rep.Gaps...)
	return e
}

// proxyReport creates a best-effort sandbox with a network policy and
// reports its network layer: a listener inside the sandbox's network
// namespace, or a Landlock port rule for the host's loopback.
func proxyReport() layer {
	sb, err := moat.New(moat.Config{Enforcement: moat.BestEffort, Network: moat.AllowAll()})
	if err != nil {
		return layer{Name: "network", Detail: strings.TrimPrefix(err.Error(), "moat: ")}
	}
	defer sb.Close()
	for _, l := range sb.Report().Layers {
		if l.Name == "network" {
			return layer{Name: l.Name, Active: l.Active, Detail: l.Detail}
		}
	}
	return layer{Name: "network"}
}

// strictWorks tries the default policy, which moat run uses.
func strictWorks() strictCheck {
	sb, err := moat.New(moat.Config{})
	if err != nil {
		return strictCheck{Error: strings.TrimPrefix(err.Error(), "moat: ")}
	}
	_ = sb.Close()
	return strictCheck{OK: true}
}

// writeJSON prints r as one indented JSON object.
func writeJSON(w io.Writer, r doctorReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// writeText prints r for people.
func writeText(w io.Writer, r doctorReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "moat doctor: %s/%s, kernel %s", r.OS, r.Arch, orNone(r.Kernel))
	if r.Machine != "" {
		fmt.Fprintf(&b, " (%s)", r.Machine)
	}
	b.WriteString("\n\nhost\n")
	item := func(name string, ok bool, detail, fix string) {
		fmt.Fprintf(&b, "  %-17s %s\n", name, yesNo(ok, detail))
		if fix != "" {
			fmt.Fprintf(&b, "  %-17s fix: %s\n", "", fix)
		}
	}
	item("landlock", r.Landlock.Available, r.Landlock.Detail, r.Landlock.Fix)
	item("seccomp", r.Seccomp.Available, r.Seccomp.Detail, r.Seccomp.Fix)
	item("user namespaces", r.UserNamespaces.Available, r.UserNamespaces.Detail, r.UserNamespaces.Fix)
	cg := r.Cgroup
	fmt.Fprintf(&b, "  %-17s %s\n", "cgroup v2", cgroupV2Text(cg))
	fmt.Fprintf(&b, "  %-17s %s\n", "cgroup v1", cgroupV1Text(cg))
	item("cgroup limits", cg.Writable, cgroupUseText(cg), cg.Fix)
	fmt.Fprintf(&b, "  %-17s %s\n", "root", yesNo(r.Root, ""))

	e := r.Enforcement
	fmt.Fprintf(&b, "\nwhat moat will enforce on this host (%s)\n", e.Mode)
	if e.Error != "" {
		fmt.Fprintf(&b, "  nothing: %s\n", e.Error)
	}
	for _, l := range e.Layers {
		mark := "off"
		if l.Active {
			mark = "on "
		}
		fmt.Fprintf(&b, "  %s %s: %s\n", mark, l.Name, l.Detail)
	}
	for _, g := range e.Gaps {
		fmt.Fprintf(&b, "  gap: %s\n", g)
	}
	if r.NetworkProxy.Detail != "" {
		fmt.Fprintf(&b, "\nwith a network policy (--network allow-all or allow-list)\n  %s %s: %s\n", onOff(r.NetworkProxy.Active), r.NetworkProxy.Name, r.NetworkProxy.Detail)
	}
	if r.Strict.OK {
		b.WriteString("\nstrict enforcement: works; moat run enforces the layers marked on\n")
	} else {
		fmt.Fprintf(&b, "\nstrict enforcement: unavailable: %s\n  moat run fails here unless given --best-effort; apply the fixes above\n", r.Strict.Error)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// yesNo renders a check's outcome with its detail.
func yesNo(ok bool, detail string) string {
	s := "no"
	if ok {
		s = "yes"
	}
	if detail != "" {
		s += ", " + detail
	}
	return s
}

// orNone returns s, or "none" when it is empty.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// cgroupV2Text describes the v2 hierarchy: mount and controllers.
func cgroupV2Text(c cgroupCheck) string {
	if c.V2Mount == "" {
		return "not mounted"
	}
	if len(c.V2Controllers) == 0 {
		return c.V2Mount + " (no controllers)"
	}
	return c.V2Mount + " (" + strings.Join(c.V2Controllers, " ") + ")"
}

// cgroupV1Text lists the v1 controllers, sorted.
func cgroupV1Text(c cgroupCheck) string {
	if len(c.V1Controllers) == 0 {
		return "none"
	}
	names := make([]string, 0, len(c.V1Controllers))
	for n := range c.V1Controllers {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, " ")
}

// cgroupUseText says which hierarchy would hold each limit, or why none.
func cgroupUseText(c cgroupCheck) string {
	if !c.Writable {
		return orNone(c.Reason)
	}
	return fmt.Sprintf("memory: %s, pids: %s, cpu: %s, kill: %s", orNone(c.Memory), orNone(c.Pids), orNone(c.CPU), orNone(c.Kill))
}

func onOff(on bool) string {
	if on {
		return "on "
	}
	return "off"
}
