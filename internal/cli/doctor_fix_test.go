package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/hostprobe"
)

// TestWithFixes: doctor pairs each missing piece, and each gap under a
// "gap: " prefix, with the fix moat's host report gives it (the fixes
// themselves are tested with hostprobe.Report.Fix).
func TestWithFixes(t *testing.T) {
	host := hostprobe.Report{Landlock: hostprobe.Feature{Fix: "boot with lsm=...,landlock"}}
	got := withFixes(host, []string{"landlock: not supported", "something moat has never heard of"},
		[]string{"signals to host processes of the same user are not blocked by Landlock"})
	want := []missingPiece{
		{Piece: "landlock: not supported", Fix: "boot with lsm=...,landlock"},
		{Piece: "something moat has never heard of", Fix: ""},
		{Piece: "gap: signals to host processes of the same user are not blocked by Landlock", Fix: host.Fix("signals")},
	}
	if !slices.Equal(got, want) {
		t.Errorf("withFixes = %+v, want %+v", got, want)
	}
	if got := withFixes(host, nil, nil); got == nil || len(got) != 0 {
		t.Errorf("withFixes of nothing = %#v, want an empty list (JSON [])", got)
	}
}

// TestHostChecks: the host part of doctor's JSON carries every field of
// moat's host report.
func TestHostChecks(t *testing.T) {
	h := hostprobe.Report{
		Kernel: "6.1.0", Machine: "x86_64", Root: true,
		Landlock:       hostprobe.Feature{Detail: "kernel reports no Landlock ABI", Fix: "boot with landlock"},
		Seccomp:        hostprobe.Feature{Available: true},
		UserNamespaces: hostprobe.Feature{Detail: "EPERM", Fix: "sysctl"},
		Cgroup: hostprobe.Cgroups{V2Mount: "/sys/fs/cgroup", V2Controllers: []string{"memory"}, V1Controllers: map[string]string{"pids": "/p"},
			Memory: "v2", Pids: "v1", CPU: "v2", Kill: "v2", Delegated: "/d", Writable: true, Reason: "r", Fix: "f"},
	}
	r := hostChecks(h)
	b, err := json.Marshal(struct {
		Kernel, Machine string
		Root            bool
		L, S, U         check
		ABI             int
		C               cgroupCheck
	}{r.Kernel, r.Machine, r.Root, r.Landlock.check, r.Seccomp, r.UserNamespaces, r.Landlock.ABI, r.Cgroup})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Kernel":"6.1.0","Machine":"x86_64","Root":true,` +
		`"L":{"available":false,"detail":"kernel reports no Landlock ABI","fix":"boot with landlock"},` +
		`"S":{"available":true,"detail":"","fix":""},"U":{"available":false,"detail":"EPERM","fix":"sysctl"},"ABI":0,` +
		`"C":{"v2_mount":"/sys/fs/cgroup","v2_controllers":["memory"],"v1_controllers":{"pids":"/p"},"memory":"v2","pids":"v1","cpu":"v2","kill":"v2","delegated":"/d","writable":true,"reason":"r","fix":"f"}}`
	if string(b) != want {
		t.Errorf("host checks:\n got %s\nwant %s", b, want)
	}
}

// TestDoctorTextWhenRunFails: on a host where moat run fails, doctor says
// so, shows what --best-effort would enforce, and gives each missing piece
// its fix.
func TestDoctorTextWhenRunFails(t *testing.T) {
	r := doctorReport{OS: "linux", Arch: "amd64", Isolation: "default"}
	r.Landlock.Fix = "boot with lsm=...,landlock"
	r.Enforcement = enforcement{Mode: "strict", Error: "host cannot enforce the policy: landlock: not supported"}
	r.BestEffort = &enforcement{Mode: "best-effort", Layers: []layer{{Name: "landlock", Detail: "not supported"}, {Name: "seccomp", Active: true, Detail: "denies ptrace"}},
		Gaps: []string{"signals to host processes of the same user are not blocked by Landlock"}}
	r.Missing = withFixes(hostprobe.Report{Landlock: hostprobe.Feature{Fix: r.Landlock.Fix}}, []string{"landlock: not supported"}, r.BestEffort.Gaps)
	r.Run = checkOf(r.Enforcement)
	var b strings.Builder
	if err := writeText(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"what moat run will enforce on this host (isolation default, strict enforcement)\n  nothing: moat run fails: host cannot enforce the policy: landlock: not supported\n",
		"what moat run --best-effort would enforce instead\n  off landlock: not supported\n  on  seccomp: denies ptrace\n",
		"  landlock: not supported\n    fix: boot with lsm=...,landlock\n",
		"  gap: signals to host processes of the same user are not blocked by Landlock\n    fix: use Linux 6.12",
		"moat run: fails with these flags unless given --best-effort",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "best-effort)\n") {
		t.Errorf("output heads a list best-effort although moat run is strict:\n%s", out)
	}
}
