package linux

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/moat-sandbox/moat/internal/golden"
	"github.com/moat-sandbox/moat/internal/spec"
)

// goldenRoot holds every path of the golden policies: it exists on no
// machine, so the few path checks the plan makes (is a read-only path
// there yet, can a mask cover a denied one) answer the same everywhere.
const goldenRoot = "/moat-golden"

// goldenHost is a fixed, synthetic host: Landlock ABI 6, seccomp with the
// socket guard, user namespaces, not root.
var goldenHost = HostInfo{Kernel: "6.12.0", Arch: "x86_64", LandlockABI: 6, Seccomp: true, UserNS: true, SocketGuard: true}

// goldenPolicy is a policy with one of everything the plan translates,
// at level l.
func goldenPolicy(l spec.Level) spec.Policy {
	r := func(p string) string { return goldenRoot + p }
	p := spec.Policy{
		ID:          "0123456789ab",
		WorkDir:     r("/home/dev/project"),
		ExecWorkDir: true,
		Scratch:     []string{r("/state/build")},
		Grants: []spec.Grant{
			{Path: r("/data"), Write: true, Dev: 2049, Ino: 11},
			{Path: r("/opt/tools"), Exec: true, Dev: 2049, Ino: 12},
			{Path: r("/cache/go-mod"), Write: true, Dev: 2049, Ino: 13},
		},
		Sockets: []spec.Socket{{Path: r("/run/agent.sock"), Dev: 25, Ino: 7}},
		Level:   l,
		View:    spec.View{Home: r("/home/dev"), Protected: []string{r("/home/dev/.ssh"), r("/home/dev/.aws")}},
		Private: spec.Private{Tmp: r("/state/tmp"), VarTmp: r("/state/var-tmp"), Home: r("/state/home")},
		Limits:  spec.Limits{MemoryBytes: 4 << 30, CPUSeconds: 60, FileSizeBytes: 1 << 30, Processes: 256, OpenFiles: 512},
		Nice:    5, IOPriority: 2,
		Network: spec.Network{ProxyPort: 41234},
		FS: spec.FS{
			Deny:     []string{r("/home/dev/project/.env"), r("/srv/secret")},
			ReadOnly: []string{r("/home/dev/project/.git/hooks")},
			Seal:     []string{r("/home/dev/project/vendor")},
			Virtual:  []spec.VirtualFile{{Path: "/etc/motd", Content: []byte("hello\n")}},
		},
	}
	if l != spec.LevelStrict {
		p.View.HomeRead = []string{r("/home/dev/.cargo"), r("/home/dev/go")}
		p.View.SharedTemp = []string{"/tmp/moat-golden-shared.txt"}
	}
	if l == spec.LevelDefault {
		p.View.HideHome = r("/home/dev")
	}
	return p
}

// goldenPlan is what the golden files hold: the helper's spec (Landlock
// rules, mounts, seccomp choices, limits) and the report.
type goldenPlan struct {
	Spec    helperSpec
	Layers  []spec.Layer
	Missing []string
	Gaps    []string
}

// TestPlanGolden checks the Linux plan of a fixed policy on a synthetic
// host, per isolation level, with and without namespaces, against
// testdata/plan/LEVEL-NS.json (go test -run TestPlanGolden -update
// rewrites them).
func TestPlanGolden(t *testing.T) {
	count := userProcesses
	userProcesses = func(int) int { return 100 } // the host user's, without a user namespace
	defer func() { userProcesses = count }()
	for _, l := range []spec.Level{spec.LevelStrict, spec.LevelDefault, spec.LevelPermissive} {
		for _, ns := range []bool{true, false} {
			name := l.String() + "-namespaces"
			if !ns {
				name = l.String() + "-no-namespaces"
			}
			t.Run(name, func(t *testing.T) {
				e := &Engine{policy: goldenPolicy(l), host: goldenHost}
				e.plan(ns)
				b, err := json.MarshalIndent(goldenPlan{Spec: e.base, Layers: e.layers, Missing: e.missing, Gaps: e.gaps}, "", "\t")
				if err != nil {
					t.Fatal(err)
				}
				got := string(b) + "\n"
				file := filepath.Join("testdata", "plan", name+".json")
				golden.Check(t, file, got)
			})
		}
	}
}
