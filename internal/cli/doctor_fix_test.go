package cli

import (
	"strings"
	"testing"
)

func TestFixFor(t *testing.T) {
	r := doctorReport{}
	r.Landlock.Fix = "boot with lsm=...,landlock"
	r.UserNamespaces.Fix = "sysctl -w kernel.unprivileged_userns_clone=1"
	tests := []struct {
		piece string
		want  string // a substring of the fix; "" means no fix
	}{
		{"landlock: not supported by the kernel", "lsm=...,landlock"},
		{"seccomp: kernel has no seccomp filters", "CONFIG_SECCOMP_FILTER"},
		{"network: no network namespace, Landlock TCP rules or seccomp", "unprivileged_userns_clone"},
		{"control paths: keeping .git/hooks, .git/config and .moat-* read-only inside writable places needs a mount namespace", "unprivileged_userns_clone"},
		{"control paths: /w/link is a symbolic link, which a mount cannot pin", "the directory the link points to"},
		{"no PID namespace: a descendant that leaves the process group can outlive a SIGKILL of moat", "unprivileged_userns_clone"},
		{"no mount namespace: host Unix sockets reachable by path (e.g. in /tmp) can be connected to", "unprivileged_userns_clone"},
		{"signals to host processes of the same user are not blocked by Landlock", "Linux 6.12"},
		{"something moat has never heard of", ""},
	}
	for _, tt := range tests {
		t.Run(tt.piece, func(t *testing.T) {
			got := fixFor(r, tt.piece)
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("fixFor = %q, want it to contain %q", got, tt.want)
			}
		})
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
	r.Missing = withFixes(r, []string{"landlock: not supported"}, r.BestEffort.Gaps)
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
