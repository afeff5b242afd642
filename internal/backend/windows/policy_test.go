package windows

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/aclplan"
	"github.com/moat-sandbox/moat/internal/spec"
)

// fakeStat is a host with the given objects.
func fakeStat(objs map[string]aclplan.Kind) Stat {
	return func(p string) (aclplan.Kind, error) {
		if k, ok := objs[p]; ok {
			return k, nil
		}
		return 0, fs.ErrNotExist
	}
}

const wd = `C:\Users\dev\project`

func TestProfileName(t *testing.T) {
	cases := map[string]string{
		"0123456789ab":           "moat.sandbox.0123456789ab",
		"AB/../x":                "moat.sandbox.abx",
		strings.Repeat("f", 100): "moat.sandbox." + strings.Repeat("f", 51),
	}
	for id, want := range cases {
		if got := ProfileName(id); got != want || len(got) > 64 {
			t.Errorf("%q: %q, want %q", id, got, want)
		}
	}
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name     string
		p        spec.Policy
		elevated bool
		want     string // "" accepts
	}{
		{"strict", spec.Policy{WorkDir: wd}, false, ""},
		{"default", spec.Policy{WorkDir: wd, Level: spec.LevelDefault}, false, ""},
		{"permissive", spec.Policy{WorkDir: wd, Level: spec.LevelPermissive}, true, "isolation permissive: not available on windows: an AppContainer cannot make the whole filesystem writable"},
		{"proxy without admin", spec.Policy{WorkDir: wd, Network: spec.Network{ProxyPort: 8080}}, false, "network proxy: not available on windows: an AppContainer reaches the policy proxy on 127.0.0.1:8080 only through a loopback exemption, and adding one needs an administrator"},
		{"proxy as admin", spec.Policy{WorkDir: wd, Network: spec.Network{ProxyPort: 8080}}, true, ""},
		{"host network", spec.Policy{WorkDir: wd, HostNetwork: true}, false, ""},
		{"no workdir", spec.Policy{}, false, "windows: no working directory"},
	}
	for _, c := range cases {
		err := Check(&c.p, c.elevated)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		var se *SettingError
		if strings.Contains(c.want, "not available") && !errors.As(err, &se) {
			t.Errorf("%s: not a *SettingError", c.name)
		}
	}
}

func TestMissingAndGaps(t *testing.T) {
	p := spec.Policy{WorkDir: wd}
	if m := Missing(&p); len(m) != 1 || !strings.Contains(m[0], "write-xor-execute") {
		t.Errorf("strict default: %q", m)
	}
	p.ExecWorkDir = true
	if m := Missing(&p); len(m) != 0 {
		t.Errorf("build mode: %q", m)
	}
	p = spec.Policy{WorkDir: wd, ExecWorkDir: true, IOPriority: 2, Sockets: []spec.Socket{{Path: `C:\s`}},
		FS: spec.FS{Seal: []string{`C:\x`}, Virtual: []spec.VirtualFile{{Path: `C:\v`}}}, AllowHardware: true}
	want := []string{"io priority", "sockets", "seal", "virtual files", "devices"}
	m := Missing(&p)
	if len(m) != len(want) {
		t.Fatalf("%q", m)
	}
	for i, w := range want {
		if !strings.HasPrefix(m[i], "windows: "+w+": ") {
			t.Errorf("%q, want %q", m[i], w)
		}
	}
	g := Gaps(&spec.Policy{Limits: spec.Limits{FileSizeBytes: 1, OpenFiles: 1}, Network: spec.Network{ProxyPort: 1}})
	if len(g) != 4 {
		t.Errorf("%q", g)
	}
}

func TestCapabilities(t *testing.T) {
	if c := Capabilities(&spec.Policy{}); c != nil {
		t.Errorf("deny-all has capabilities %q", c)
	}
	if c := Capabilities(&spec.Policy{Network: spec.Network{ProxyPort: 1}}); c != nil {
		t.Errorf("a proxy policy has capabilities %q: the exemption is for loopback only", c)
	}
	if c := Capabilities(&spec.Policy{HostNetwork: true}); len(c) != 3 {
		t.Errorf("host network: %q", c)
	}
}

func TestPlanInput(t *testing.T) {
	host := map[string]aclplan.Kind{
		wd: aclplan.Dir, `C:\stage`: aclplan.Dir, `C:\tools\x.exe`: aclplan.File,
		`C:\t\tmp`: aclplan.Dir, `C:\t\home`: aclplan.Dir,
		`C:\Users\dev\.ssh`: aclplan.Dir, `C:\Users\dev\.cargo`: aclplan.Dir,
		wd + `\.git\hooks`: aclplan.Dir,
	}
	p := spec.Policy{WorkDir: wd,
		Grants:  []spec.Grant{{Path: `C:\stage`, Exec: true}, {Path: `C:\tools\x.exe`, Write: true}},
		Private: spec.Private{Tmp: `C:\t\tmp`, VarTmp: `C:\t\vartmp`, Home: `C:\t\home`},
		View:    spec.View{HomeRead: []string{`C:\Users\dev\.cargo`, `C:\Users\dev\.rustup`}, Protected: []string{`C:\Users\dev\.ssh`, `C:\Users\dev\.aws`}},
		FS:      spec.FS{ReadOnly: []string{wd + `\.git\hooks`, wd + `\.git\config`}, Deny: []string{`C:\elsewhere\gone`}},
	}
	in, missing, err := PlanInput(&p, fakeStat(host), `C:\ac\Temp`)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Grants) != 2 || in.Grants[0].Kind != aclplan.Dir || in.Grants[1].Kind != aclplan.File || !in.Grants[1].Write {
		t.Errorf("grants %+v", in.Grants)
	}
	if len(in.Private) != 2 || len(in.HomeRead) != 1 || len(in.Protected) != 1 || len(in.ReadOnly) != 1 || len(in.Deny) != 0 {
		t.Errorf("input %+v", in)
	}
	if len(missing) != 1 || !strings.Contains(missing[0], `.git\config`) {
		t.Errorf("missing %q: a read-only path missing in the workdir could be created", missing)
	}
	if _, err := aclplan.Build(in); err != nil {
		t.Error(err)
	}
	p.Grants = append(p.Grants, spec.Grant{Path: `C:\nope`})
	if _, _, err := PlanInput(&p, fakeStat(host), ""); err == nil || !strings.Contains(err.Error(), `grant "C:\nope"`) {
		t.Errorf("missing grant: %v", err)
	}
}

func TestExecRoots(t *testing.T) {
	p := spec.Policy{WorkDir: wd, Grants: []spec.Grant{{Path: `C:\a`, Exec: true}, {Path: `C:\b`, Write: true}},
		Scratch: []string{`C:\s`}, View: spec.View{HomeRead: []string{`C:\Users\dev\.cargo`}}}
	got := strings.Join(ExecRoots(&p, []string{`C:\Windows`}), ";")
	if got != `C:\Windows;C:\a;C:\Users\dev\.cargo;C:\s` {
		t.Errorf("%s", got)
	}
	p.ExecWorkDir = true
	if got := ExecRoots(&p, nil); got[len(got)-1] != wd {
		t.Errorf("build mode: %q", got)
	}
}

func TestLayers(t *testing.T) {
	l := Layers(&spec.Policy{ID: "ab", Network: spec.Network{ProxyPort: 3128}}, 7, false)
	var names []string
	for _, x := range l {
		names = append(names, x.Name)
	}
	if strings.Join(names, ",") != "appcontainer,filesystem,job object,ui restrictions,network,write-xor-execute" {
		t.Errorf("%q", names)
	}
	if !strings.Contains(l[4].Detail, "3128") || l[3].Active || l[5].Active || !strings.Contains(l[1].Detail, "7 access entries") {
		t.Errorf("%+v", l)
	}
}

func TestMitigationPolicy(t *testing.T) {
	base := uint64(mitigationExtensionPointDisable | mitigationNoRemoteImages)
	cases := []struct {
		name string
		p    spec.Policy
		want uint64
	}{
		{"strict", spec.Policy{WorkDir: wd}, base | mitigationNoLowLabelImages},
		{"rx grant", spec.Policy{WorkDir: wd, Grants: []spec.Grant{{Path: `C:`, Exec: true}, {Path: `C:`, Write: true}}}, base | mitigationNoLowLabelImages},
		{"build mode", spec.Policy{WorkDir: wd, ExecWorkDir: true}, base},
		{"scratch", spec.Policy{WorkDir: wd, Scratch: []string{`C:\s`}}, base},
		{"rwx grant", spec.Policy{WorkDir: wd, Grants: []spec.Grant{{Path: `C:`, Write: true, Exec: true}}}, base},
	}
	for _, c := range cases {
		if got := MitigationPolicy(&c.p); got != c.want {
			t.Errorf("%s: %#x, want %#x", c.name, got, c.want)
		}
	}
}

// TestExecRootsMatchPlan: moat refuses to start a program outside
// ExecRoots; every root the backend names (besides the system's) is one
// whose files the plan makes executable, and nothing else the plan
// allows is.
func TestExecRootsMatchPlan(t *testing.T) {
	host := map[string]aclplan.Kind{wd: aclplan.Dir, `C:\x`: aclplan.Dir, `C:\w`: aclplan.Dir, `C:\wx`: aclplan.Dir,
		`C:\s`: aclplan.Dir, `C:\Users\dev\.cargo`: aclplan.Dir, `C:\t\tmp`: aclplan.Dir}
	for _, build := range []bool{false, true} {
		p := spec.Policy{WorkDir: wd, ExecWorkDir: build, Scratch: []string{`C:\s`},
			Grants:  []spec.Grant{{Path: `C:\x`, Exec: true}, {Path: `C:\w`, Write: true}, {Path: `C:\wx`, Write: true, Exec: true}},
			View:    spec.View{HomeRead: []string{`C:\Users\dev\.cargo`}},
			Private: spec.Private{Tmp: `C:\t\tmp`}}
		in, _, err := PlanInput(&p, fakeStat(host), "")
		if err != nil {
			t.Fatal(err)
		}
		plan, err := aclplan.Build(in)
		if err != nil {
			t.Fatal(err)
		}
		roots := ExecRoots(&p, nil)
		for d := range host {
			f := d + `\prog.exe`
			inRoots := false
			for _, r := range roots {
				inRoots = inRoots || aclplan.Under(f, r)
			}
			if exec := plan.Access(f, aclplan.File)&aclplan.Execute != 0; exec != inRoots {
				t.Errorf("build %v: %s executable by the plan %v, under ExecRoots %v", build, f, exec, inRoots)
			}
		}
	}
}
