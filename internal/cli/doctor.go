package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/hostprobe"
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

	// Isolation is the level moat run uses with the flags given (the
	// CLI's default is "default").
	Isolation string `json:"isolation"`
	// Enforcement is what moat run, given the same flags, enforces on this
	// host: its layers and gaps, or, in Error, why it cannot start.
	Enforcement enforcement `json:"enforcement"`
	// BestEffort is what moat run would enforce with --best-effort added,
	// when it cannot start without it; nil otherwise.
	BestEffort *enforcement `json:"best_effort,omitempty"`
	// Missing lists each piece that strict enforcement lacks here and each
	// gap, with how to get it.
	Missing []missingPiece `json:"missing"`
	// NetworkProxy says how a sandbox with a network policy reaches its
	// proxy here, and what holds everything else back.
	NetworkProxy layer `json:"network_proxy"`
	// Run says whether moat run with the flags given starts here; moat
	// doctor exits 0 exactly when it does.
	Run strictCheck `json:"run"`
	// Strict says whether it starts without --best-effort.
	Strict strictCheck `json:"strict"`
}

// missingPiece is one thing strict enforcement lacks, or one gap, and how
// to get it; Fix is empty when moat knows no fix.
type missingPiece struct {
	Piece string `json:"piece"`
	Fix   string `json:"fix"`
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
	Memory string `json:"memory"`
	Pids   string `json:"pids"`
	CPU    string `json:"cpu"`
	Kill   string `json:"kill"`
	// Delegated is the delegated cgroup v2 subtree a user who is not
	// root would use; "" for root or when there is none.
	Delegated string `json:"delegated,omitempty"`
	Writable  bool   `json:"writable"`
	Reason    string `json:"reason"`
	Fix       string `json:"fix"`
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

// strictCheck says whether a sandbox can be created.
type strictCheck struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

// newDoctorCmd builds "moat doctor".
func newDoctorCmd(std stdio) *cobra.Command {
	var asJSON bool
	var flags *sandboxFlags
	c := &cobra.Command{
		Use:   "doctor [--json] [run flags]",
		Short: "Check what moat can enforce on this host",
		Long: `Check what this host offers the sandbox, what moat run will enforce here,
and how to get what is missing. It takes the flags of moat run and reports
on the sandbox moat run would build with them: with none, the default
isolation level and strict enforcement, as moat run uses. Exit status 0
means moat run with these flags works here; 1 means it fails (see the
fixes, or add --best-effort to run with what the host has).`,
		Example: `  moat doctor
  moat doctor --json
  moat doctor --isolation strict --network allow-list --allow-domain pypi.org`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			cfg, err := flags.config()
			if err != nil {
				return err
			}
			defer flags.closeAuditLog()
			defer flags.dropKept() // heel.go: no command runs, nothing to keep
			r := diagnose(cfg)
			if asJSON {
				err = writeJSON(std.out, r)
			} else {
				err = writeText(std.out, r)
			}
			if err != nil {
				return failf("doctor: %v", err)
			}
			if !r.Run.OK {
				return &exitStatus{code: 1}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON object instead of text")
	flags = addSandboxFlags(c.Flags())
	completeFlagValues(c)
	return c
}

// diagnose probes the host and tries the sandbox moat run would build from
// cfg: as given, without --best-effort, and, when that fails, with it.
func diagnose(cfg moat.Config) doctorReport {
	host := hostprobe.Probe()
	r := hostChecks(host)
	r.OS, r.Arch = runtime.GOOS, runtime.GOARCH
	r.Isolation = cfg.Isolation.String()
	var missing []string
	r.Enforcement, missing = sandboxReport(cfg)
	r.Run = checkOf(r.Enforcement)
	if cfg.Enforcement == moat.Strict {
		r.Strict = r.Run
	} else {
		strict := cfg
		strict.Enforcement = moat.Strict
		var e enforcement
		e, missing = sandboxReport(strict)
		r.Strict = checkOf(e)
	}
	if !r.Run.OK {
		be := cfg
		be.Enforcement = moat.BestEffort
		e, _ := sandboxReport(be)
		r.BestEffort = &e
	}
	gaps := r.Enforcement.Gaps
	if r.BestEffort != nil {
		gaps = r.BestEffort.Gaps
	}
	r.Missing = withFixes(host, missing, gaps)
	if moat.NetworkDeniesAll(cfg.Network) {
		r.NetworkProxy = proxyReport(cfg)
	}
	if r.Cgroup.V2Controllers == nil {
		r.Cgroup.V2Controllers = []string{}
	}
	if r.Cgroup.V1Controllers == nil {
		r.Cgroup.V1Controllers = map[string]string{}
	}
	return r
}

// sandboxReport creates the sandbox cfg describes and reports its layers,
// or why it cannot be created and, for a host that lacks a layer, what.
func sandboxReport(cfg moat.Config) (e enforcement, missing []string) {
	e = enforcement{Platform: runtime.GOOS, Mode: cfg.Enforcement.String(), Layers: []layer{}, Gaps: []string{}}
	sb, err := moat.New(cfg)
	if err != nil {
		var un *moat.UnsupportedError
		if errors.As(err, &un) {
			missing = un.Missing
		}
		e.Error = err.Error()
		return e, missing
	}
	defer sb.Close()
	rep := sb.Report()
	e.Platform, e.Mode = rep.Platform, rep.Enforcement.String()
	for _, l := range rep.Layers {
		e.Layers = append(e.Layers, layer{Name: l.Name, Active: l.Active, Detail: l.Detail})
	}
	e.Gaps = append(e.Gaps, rep.Gaps...)
	return e, nil
}

// checkOf says whether the sandbox e reports on could be created.
func checkOf(e enforcement) strictCheck {
	return strictCheck{OK: e.Error == "", Error: e.Error}
}

// proxyReport creates a best-effort sandbox like cfg but with a network
// policy and reports its network layer: a listener inside the sandbox's
// network namespace, or a Landlock port rule for the host's loopback.
func proxyReport(cfg moat.Config) layer {
	cfg.Enforcement, cfg.Network = moat.BestEffort, moat.AllowAll()
	sb, err := moat.New(cfg)
	if err != nil {
		return layer{Name: "network", Detail: err.Error()}
	}
	defer sb.Close()
	for _, l := range sb.Report().Layers {
		if l.Name == "network" {
			return layer{Name: l.Name, Active: l.Active, Detail: l.Detail}
		}
	}
	return layer{Name: "network"}
}

// strictWorks tries the sandbox that moat run builds when given no flags.
func strictWorks() strictCheck {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f := addSandboxFlags(fs)
	cfg, err := f.config()
	if err != nil {
		return strictCheck{Error: err.Error()}
	}
	e, _ := sandboxReport(cfg)
	return checkOf(e)
}

// withFixes pairs each missing piece and each gap with the fix that
// host gives it.
func withFixes(host hostprobe.Report, missing, gaps []string) []missingPiece {
	out := []missingPiece{}
	for _, m := range missing {
		out = append(out, missingPiece{Piece: m, Fix: host.Fix(m)})
	}
	for _, g := range gaps {
		out = append(out, missingPiece{Piece: "gap: " + g, Fix: host.Fix(g)})
	}
	return out
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
	fmt.Fprintf(&b, "\nwhat moat run will enforce on this host (isolation %s, %s enforcement)\n", r.Isolation, e.Mode)
	if e.Error != "" {
		fmt.Fprintf(&b, "  nothing: moat run fails: %s\n", e.Error)
	}
	writeLayers(&b, e)
	if r.BestEffort != nil {
		fmt.Fprintf(&b, "\nwhat moat run --best-effort would enforce instead\n")
		if r.BestEffort.Error != "" {
			fmt.Fprintf(&b, "  nothing: %s\n", r.BestEffort.Error)
		}
		writeLayers(&b, *r.BestEffort)
	}
	if len(r.Missing) > 0 {
		b.WriteString("\nwhat is missing, and how to get it\n")
		for _, m := range r.Missing {
			fmt.Fprintf(&b, "  %s\n", m.Piece)
			if m.Fix != "" {
				fmt.Fprintf(&b, "    fix: %s\n", m.Fix)
			}
		}
	}
	if r.NetworkProxy.Detail != "" {
		fmt.Fprintf(&b, "\nwith a network policy (--network allow-all or allow-list)\n  %s %s: %s\n", onOff(r.NetworkProxy.Active), r.NetworkProxy.Name, r.NetworkProxy.Detail)
	}
	switch {
	case r.Run.OK && len(r.Missing) == 0:
		b.WriteString("\nmoat run: works with these flags, and enforces every layer marked on\n")
	case r.Run.OK:
		b.WriteString("\nmoat run: works with these flags, with the gaps above; it enforces the layers marked on\n")
	default:
		b.WriteString("\nmoat run: fails with these flags unless given --best-effort; apply the fixes above\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeLayers prints e's layers, one a line; its gaps are listed with
// their fixes under "what is missing".
func writeLayers(b *strings.Builder, e enforcement) {
	for _, l := range e.Layers {
		fmt.Fprintf(b, "  %s %s: %s\n", onOff(l.Active), l.Name, l.Detail)
	}
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
	s := fmt.Sprintf("memory: %s, pids: %s, cpu: %s, kill: %s", orNone(c.Memory), orNone(c.Pids), orNone(c.CPU), orNone(c.Kill))
	if c.Delegated != "" {
		s += ", delegated subtree " + c.Delegated
	}
	return s
}

func onOff(on bool) string {
	if on {
		return "on "
	}
	return "off"
}
