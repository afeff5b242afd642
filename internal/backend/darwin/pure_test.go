package darwin

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/sbpl"
	"github.com/moat-sandbox/moat/internal/spec"
)

// TestAssess checks the report's layers and that strict enforcement fails
// closed for what macOS cannot hold.
func TestAssess(t *testing.T) {
	cases := []struct {
		name        string
		mutate      func(*spec.Policy)
		f           facts
		wantMissing []string // prefixes
		active      map[string]bool
	}{
		{"plain", func(*spec.Policy) {}, facts{sandboxExec: true}, nil,
			map[string]bool{"sandbox-exec (Seatbelt)": true, "namespaces": false, "seccomp": false, "cgroup": false, "network": true}},
		{"no sandbox-exec", func(*spec.Policy) {}, facts{}, []string{"sandbox-exec:"},
			map[string]bool{"sandbox-exec (Seatbelt)": false}},
		{"memory limit is watched", func(p *spec.Policy) { p.Limits.MemoryBytes = 1 << 30 }, facts{sandboxExec: true}, nil,
			map[string]bool{"memory-watch": true}},
		{"virtual files", func(p *spec.Policy) { p.FS.Virtual = []spec.VirtualFile{{Path: "/x"}} }, facts{sandboxExec: true}, []string{"virtual files:"}, nil},
		{"hide proc is trivially held", func(p *spec.Policy) { p.FS.HideProc = true }, facts{sandboxExec: true}, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := seedPolicy()
			c.mutate(&p)
			layers, missing, gaps := assess(&p, c.f)
			if len(missing) != len(c.wantMissing) {
				t.Fatalf("missing %q, want prefixes %q", missing, c.wantMissing)
			}
			for i, w := range c.wantMissing {
				if !strings.HasPrefix(missing[i], w) {
					t.Errorf("missing[%d] = %q, want prefix %q", i, missing[i], w)
				}
			}
			for name, want := range c.active {
				i := slices.IndexFunc(layers, func(l spec.Layer) bool { return l.Name == name })
				if i < 0 {
					t.Errorf("no layer %q", name)
				} else if layers[i].Active != want {
					t.Errorf("layer %q active=%v, want %v", name, layers[i].Active, want)
				}
			}
			if !slices.ContainsFunc(gaps, func(g string) bool { return strings.Contains(g, "process group") }) {
				t.Errorf("gaps %q omit the process group", gaps)
			}
		})
	}
}

func TestRlimitPlan(t *testing.T) {
	got := rlimitPlan(10, 1<<20, 100, 256, 40)
	want := []rlimit{{rlimitCORE, 0, 0}, {rlimitCPU, 10, 11}, {rlimitFSIZE, 1 << 20, 0}, {rlimitNOFILE, 256, 0}, {rlimitNPROC, 140, 0}}
	if !slices.Equal(got, want) {
		t.Errorf("rlimitPlan = %v, want %v", got, want)
	}
	if got := rlimitPlan(0, 0, 0, 0, 5); !slices.Equal(got, []rlimit{{rlimitCORE, 0, 0}}) {
		t.Errorf("no limits: %v", got)
	}
	for prio, want := range map[int]int{0: 0, 1: iopolUtility, 2: iopolThrottle, 3: 0} {
		if got := ioPolicy(prio); got != want {
			t.Errorf("ioPolicy(%d) = %d, want %d", prio, got, want)
		}
	}
}

// TestExecRoots checks that Cmd's executable lookup agrees with the
// profile: a read-execute grant inside a writable place or shared temp
// runs nothing, an rwx grant does.
func TestExecRoots(t *testing.T) {
	p := seedPolicy()
	p.Grants = []spec.Grant{
		{Path: seedWork + "/bin", Exec: true},
		{Path: "/private/tmp/tool", Exec: true},
		{Path: "/Users/alice/tools", Exec: true},
		{Path: "/Users/alice/target", Write: true, Exec: true},
	}
	roots := execRoots(&p)
	for path, want := range map[string]bool{
		seedWork + "/bin": false, "/private/tmp/tool": false, "/Users/alice/tools": true,
		"/Users/alice/target": true, "/usr": true, seedWork: false,
	} {
		if got := slices.Contains(roots, path); got != want {
			t.Errorf("%s in exec roots: %v, want %v", path, got, want)
		}
	}
	prof, err := sbpl.Build(ProfileInput(p, seedHost))
	if err != nil {
		t.Fatal(err)
	}
	r, err := sbpl.Parse(prof)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range p.Grants {
		if got, want := r.Allowed("process-exec", g.Path+"/x"), slices.Contains(roots, g.Path); got != want {
			t.Errorf("profile runs %s/x: %v, exec roots say %v", g.Path, got, want)
		}
	}
	p.Level = spec.LevelPermissive
	if got := execRoots(&p); !slices.Equal(got, []string{"/"}) {
		t.Errorf("permissive exec roots %q", got)
	}
}

func TestProfileInput(t *testing.T) {
	p := seedPolicy()
	p.Private.VarTmp = seedTmp // the same directory twice is named once
	p.FS.ReadOnly = []string{seedWork + "/b", seedWork + "/a"}
	p.FS.Seal = []string{seedWork + "/conf"}
	p.Sockets = []spec.Socket{{Path: "/private/tmp/s.sock"}}
	p.Grants = []spec.Grant{{Path: "/Users/alice/dir", Write: true}, {Path: "/Users/alice/f.txt"}}
	h := seedHost
	h.Root = true
	h.ControlPaths = []string{seedWork + "/a", seedWork + "/.git/config"}
	h.Entries = func(d string) []string { return []string{d + "/keep.toml", d + "/sub/deep"} }
	in := ProfileInput(p, h)
	if !slices.Equal(in.Private, []string{seedTmp, seedHomeDir}) {
		t.Errorf("private %q", in.Private)
	}
	if !slices.Equal(in.ReadOnly, []string{seedWork + "/.git/config", seedWork + "/a", seedWork + "/b"}) {
		t.Errorf("read-only %q", in.ReadOnly)
	}
	if len(in.Seal) != 1 || !slices.Equal(in.Seal[0].Keep, []string{seedWork + "/conf/keep.toml"}) {
		t.Errorf("seal %+v", in.Seal)
	}
	if in.TTYIoctl {
		t.Error("terminal ioctls allowed for root")
	}
	if !in.Grants[0].Dir || in.Grants[1].Dir {
		t.Errorf("grants %+v", in.Grants)
	}
	if !slices.Equal(in.Sockets, []string{"/private/tmp/s.sock"}) {
		t.Errorf("sockets %q", in.Sockets)
	}
}

// FuzzHelperWire feeds arbitrary bytes to the helper's two parsers.
func FuzzHelperWire(f *testing.F) {
	b, _ := encodeSpec(helperSpec{Path: "/bin/sh", Args: []string{"sh"}, Env: []string{"A=1"}})
	f.Add(b)
	f.Add([]byte("R127 x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := decodeSpec(b); err == nil && (s.Path == "" || len(s.Args) == 0) {
			t.Fatalf("accepted a spec without a command: %+v", s)
		}
		st := parseStatus(b)
		if st.Code < 0 || st.Code > 255 {
			t.Fatalf("status code %d", st.Code)
		}
	})
}

// fakeSampler is a process table: groups and footprints.
type fakeSampler struct {
	groups map[int][]int
	fp     map[int]uint64
}

func (f fakeSampler) members(pgid int) ([]int, error) {
	m, ok := f.groups[pgid]
	if !ok {
		return nil, errors.New("no such group")
	}
	return m, nil
}

func (f fakeSampler) footprint(pid int) (uint64, error) {
	v, ok := f.fp[pid]
	if !ok {
		return 0, errors.New("gone")
	}
	return v, nil
}

// TestMemoryWatch checks the watch's sum: every member counts, one that
// is gone is skipped, and only a sum past the limit kills.
func TestMemoryWatch(t *testing.T) {
	s := fakeSampler{groups: map[int][]int{10: {10, 11, 12}}, fp: map[int]uint64{10: 40 << 20, 11: 70 << 20}}
	cases := []struct {
		limit int64
		over  bool
	}{{100 << 20, true}, {110 << 20, false}, {200 << 20, false}, {0, false}}
	for _, c := range cases {
		reason, err := overLimit(s, 10, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		if (reason != "") != c.over {
			t.Errorf("limit %d MiB: reason %q, want over=%v", c.limit>>20, reason, c.over)
		}
		if c.over && !strings.Contains(reason, "110 MiB") {
			t.Errorf("reason %q does not say 110 MiB", reason)
		}
	}
	if _, err := overLimit(s, 99, 1); err == nil {
		t.Error("an unknown group gave no error")
	}
}

// TestReadOnlyControl checks which recorded control paths become
// read-only: a git directory itself stays writable, so git still works.
func TestReadOnlyControl(t *testing.T) {
	dirs := map[string]bool{"/w/.git": true, "/w/.git/hooks": true, "/w/.git/info": true, "/w/.agents": true, "/w/.git/worktrees/x": true, "/w/bare": true}
	rec := []string{"/w/.git", "/w/.git/config", "/w/.git/hooks", "/w/.git/hooks/pre-commit", "/w/.git/info", "/w/.git/info/exclude",
		"/w/.agents", "/w/.moat-deny", "/w/.git/worktrees/x", "/w/sub/.git", "/w/bare"}
	got := readOnlyControl(rec, func(p string) bool { return dirs[p] })
	want := []string{"/w/.git/config", "/w/.git/hooks", "/w/.git/hooks/pre-commit", "/w/.git/info", "/w/.git/info/exclude", "/w/.agents", "/w/.moat-deny", "/w/sub/.git"}
	if !slices.Equal(got, want) {
		t.Errorf("readOnlyControl = %q, want %q", got, want)
	}
}
