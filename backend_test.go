package moat

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/moat-sandbox/moat/internal/golden"
	"github.com/moat-sandbox/moat/internal/spec"
)

// goldenHost is a fixed, synthetic host: what openBackend would have read
// on a machine that has none of the paths below, so that planPolicy's
// answer is the same on every machine.
func goldenHost(level Isolation) hostFacts {
	h := hostFacts{
		ID:            "0123456789ab",
		WorkDir:       "/home/dev/project",
		View:          spec.View{Home: "/home/dev", Protected: []string{"/home/dev/.ssh", "/home/dev/.aws"}},
		Private:       spec.Private{Tmp: "/state/tmp", VarTmp: "/state/var-tmp", Home: "/state/home"},
		FileSizeBytes: 1 << 30,
		Identity: map[string]fileKey{
			"/data":         {Dev: 2049, Ino: 11},
			"/opt/tools":    {Dev: 2049, Ino: 12},
			"/cache/go-mod": {Dev: 2049, Ino: 13},
		},
		CacheStores: []string{"/cache/go-mod"},
		Sockets:     []spec.Socket{{Path: "/run/user/1000/agent.sock", Dev: 25, Ino: 7}},
		Canonical:   map[string]string{"/home/dev/project/link/.env": "/home/dev/real/.env"},
		Scratch:     "/state/build",
		ProxyPort:   41234,
	}
	if level != IsolationStrict {
		h.View.HomeRead = []string{"/home/dev/.cargo", "/home/dev/go"}
		h.SharedTemp = []string{"/tmp/shared.txt"}
	}
	if level == IsolationDefault {
		h.View.HideHome = "/home/dev"
	}
	return h
}

// goldenConfig is a checked Config with one of everything the plan
// translates.
func goldenConfig(level Isolation) Config {
	return Config{
		Isolation: level,
		Build:     true,
		Grants: []Grant{
			{Path: "/data", Access: READ | WRITE},
			{Path: "/opt/tools", Access: READ | EXEC},
		},
		Sockets:      []string{"/run/user/1000/agent.sock"},
		Deny:         []string{"/home/dev/project/link/.env"},
		ReadOnly:     []string{"/home/dev/project/.git/hooks"},
		Seal:         []string{"/home/dev/project/vendor"},
		VirtualFiles: map[string]string{"/etc/motd": "hello\n"},
		Network:      AllowAll(),
		Limits:       Limits{MemoryBytes: 4 << 30, CPUSeconds: 60, FileSizeBytes: 1 << 30, Processes: 256, OpenFiles: 512},
		Nice:         5,
		IOPriority:   IOPriorityBackground,
	}
}

// TestPlanPolicyGolden checks the policy planPolicy makes of a fixed
// Config and a synthetic host, per isolation level, against
// testdata/plan/LEVEL.json (go test -run TestPlanPolicyGolden -update
// rewrites them). The plan does no I/O, so the files hold on any machine.
func TestPlanPolicyGolden(t *testing.T) {
	for _, level := range []Isolation{IsolationStrict, IsolationDefault, IsolationPermissive} {
		name := specLevel(level).String()
		t.Run(name, func(t *testing.T) {
			cfg, h := goldenConfig(level), goldenHost(level)
			p := planPolicy(&cfg, &h)
			b, err := json.MarshalIndent(p, "", "\t")
			if err != nil {
				t.Fatal(err)
			}
			got := string(b) + "\n"
			file := filepath.Join("testdata", "plan", name+".json")
			golden.Check(t, file, got)
		})
	}
}
