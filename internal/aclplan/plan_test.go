package aclplan

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/golden"
)

const (
	work  = `C:\Users\dev\project`
	home  = `C:\Users\dev`
	acdir = `C:\Users\dev\AppData\Local\Packages\moat.sandbox.0123456789ab\AC`
)

// deep is a directory path of more than 300 characters (W3).
var deep = `C:\stage\` + strings.Repeat(`d`, 60) + `\` + strings.Repeat(`e`, 60) + `\` +
	strings.Repeat(`f`, 60) + `\` + strings.Repeat(`g`, 60) + `\` + strings.Repeat(`h`, 60)

// goldenCases are plans checked line by line against testdata/NAME.golden
// (go test -run TestPlanGolden -update rewrites them).
var goldenCases = []struct {
	name string
	in   Input
}{
	{"workdir", Input{WorkDir: work}},
	{"build_mode", Input{WorkDir: work, ExecWorkDir: true, Scratch: []string{`C:\Users\dev\AppData\Local\Temp\moat-x\gotmp`}}},
	{"w1_container_folder", Input{WorkDir: work, ContainerFolder: acdir,
		Private: []string{`C:\Users\dev\AppData\Local\Temp\moat-x\tmp`, `C:\Users\dev\AppData\Local\Temp\moat-x\home`}}},
	{"w2_writable_grant", Input{WorkDir: work, Grants: []Grant{{Object: Object{`D:\target`, Dir}, Write: true}}}},
	{"w3_deep", Input{WorkDir: work, Grants: []Grant{{Object: Object{`C:\stage`, Dir}}}}},
	{"w4_exec_grant", Input{WorkDir: work, Grants: []Grant{{Object: Object{`C:\Users\dev\stage`, Dir}, Exec: true}}}},
	{"w6_drive_root", Input{WorkDir: work, Grants: []Grant{{Object: Object{`C:\heel-stage`, Dir}, Exec: true}}}},
	{"rwx_file", Input{WorkDir: work, Grants: []Grant{{Object: Object{`C:\tools\run.exe`, File}, Write: true, Exec: true}}}},
	{"protected_inside_grant", Input{WorkDir: work,
		Grants:    []Grant{{Object: Object{home, Dir}}},
		Protected: []Object{{`C:\Users\dev\.ssh`, Dir}, {`C:\Users\dev\.aws\credentials`, File}, {`C:\Users\Other\.ssh`, Dir}}}},
	{"grant_beats_protection", Input{WorkDir: work,
		Grants:    []Grant{{Object: Object{home, Dir}}, {Object: Object{`C:\Users\dev\.ssh\known_hosts`, File}}, {Object: Object{`C:\Users\dev\.config`, Dir}}},
		Protected: []Object{{`C:\Users\dev\.ssh`, Dir}, {`C:\Users\dev\.config`, Dir}}}},
	{"readonly_in_workdir", Input{WorkDir: work,
		ReadOnly: []Object{{`C:\Users\dev\project\.git\hooks`, Dir}, {`C:\Users\dev\project\.git\config`, File}},
		Deny:     []Object{{`C:\Users\dev\project\.env`, File}}}},
	{"default_level_home", Input{WorkDir: work,
		HomeRead:  []Object{{`C:\Users\dev\.cargo`, Dir}, {`C:\Users\dev\.gitconfig`, File}},
		Protected: []Object{{`C:\Users\dev\.cargo\credentials.toml`, File}}}},
	{"union_of_grants", Input{WorkDir: work, Grants: []Grant{
		{Object: Object{`C:\data`, Dir}}, {Object: Object{`c:\DATA`, Dir}, Write: true}, {Object: Object{`C:\data`, Dir}, Exec: true}}}},
}

func TestPlanGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Build(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			got := p.String()
			file := filepath.Join("testdata", tc.name+".golden")
			golden.Check(t, file, got)
		})
	}
}

func must(t *testing.T, in Input) Plan {
	t.Helper()
	p, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPlanNoEntryCarriesWriteDAC: the container never gets to change an
// access list moat set, nor take ownership, in any golden plan.
func TestPlanNoEntryCarriesWriteDAC(t *testing.T) {
	for _, tc := range goldenCases {
		for _, e := range must(t, tc.in).Entries {
			if e.Access == Allow && e.Mask&(WriteDAC|WriteOwner) != 0 {
				t.Errorf("%s: %v", tc.name, e)
			}
		}
	}
}

// TestPlanWriteXorExecute: in every golden plan, a file the plan lets the
// container write is executable only under an rwx grant, the build-mode
// workdir or a scratch directory.
func TestPlanWriteXorExecute(t *testing.T) {
	for _, tc := range goldenCases {
		p := must(t, tc.in)
		for _, e := range p.Entries {
			f := e.Path + `\x.exe`
			if e.Kind == File {
				f = e.Path
			}
			m := p.Access(f, File)
			if m&WriteData == 0 || m&Execute == 0 {
				continue
			}
			// A path granted twice keeps the union: rw and rx make rwx.
			union := strings.Contains(e.Why, "grant rw") && strings.Contains(e.Why, "grant rx")
			ok := union || strings.Contains(e.Why, "rwx") || strings.Contains(e.Why, "scratch") || (tc.in.ExecWorkDir && strings.Contains(e.Why, "workdir"))
			if !ok {
				t.Errorf("%s: %s is writable and executable: %s", tc.name, f, m.Names(File))
			}
		}
	}
}

// Seed cases W1-W6 (heel tests/isolation_windows.rs), as plans: what each
// real-host test needs, checked by simulating the container's access check
// on the plan's entries alone.
func TestSeedW1ContainerTempWritableNotExecutable(t *testing.T) {
	p := must(t, Input{WorkDir: work, ContainerFolder: acdir})
	temp := acdir + `\Temp`
	if !strings.Contains(temp, `\Packages\`) {
		t.Fatal("the container's temp lies under \\Packages\\")
	}
	// Windows grants the container its own folder; the plan adds only
	// the deny of execute, nearer than the folder's inherited grant.
	found := false
	for _, e := range p.Entries {
		if Key(e.Path) == Key(acdir) {
			found = e.Access == Deny && e.Inherit == Files && e.Mask == Execute
		}
	}
	if !found {
		t.Errorf("no deny of EXECUTE on the files of %s:\n%s", acdir, p)
	}
	for _, f := range []string{temp + `\payload.exe`, acdir + `\AppData\x.exe`} {
		if m := p.Access(f, File); m&Execute != 0 {
			t.Errorf("%s executable: %s", f, m.Names(File))
		}
	}
}

func TestSeedW2WritableGrantRenamesAndRemoves(t *testing.T) {
	root := `D:\target`
	p := must(t, Input{WorkDir: work, Grants: []Grant{{Object: Object{root, Dir}, Write: true}}})
	steps := []struct {
		what string
		ok   bool
	}{
		{"create a file in the grant", p.Access(root, Dir)&WriteData != 0},
		{"mkdir in the grant", p.Access(root, Dir)&AppendData != 0},
		{"create in the child", p.Access(root+`\deps`, Dir)&WriteData != 0},
		{"write the file", p.Access(root+`\deps\a.rmeta`, File)&(WriteData|AppendData) == WriteData|AppendData},
		{"rename over another file (DELETE on both)", p.CanRemove(root+`\deps\a.rmeta`, File) && p.Access(root+`\deps\b.rmeta`, File)&Delete != 0},
		{"del", p.CanRemove(root+`\deps\b.rmeta`, File)},
		{"rd /s /q", p.CanRemove(root+`\deps`, Dir) && p.Access(root+`\deps`, Dir)&DeleteChild != 0},
		{"no execute of what was written", p.Access(root+`\deps\a.exe`, File)&Execute == 0},
		{"the grant itself is not removed", !p.CanRemove(root, Dir)},
	}
	for _, s := range steps {
		if !s.ok {
			t.Errorf("%s: refused by the plan:\n%s", s.what, p)
		}
	}
}

func TestSeedW3DeeperThanMaxPath(t *testing.T) {
	if len(deep) <= 300 {
		t.Fatalf("deep path is %d characters", len(deep))
	}
	p := must(t, Input{WorkDir: work, Grants: []Grant{{Object: Object{`C:\stage`, Dir}}}})
	if m := p.Access(deep+`\file.txt`, File); m&ReadData == 0 {
		t.Errorf("a file %d characters deep is not readable: %s", len(deep), m.Names(File))
	}
	// A grant of the deep directory itself is applied through the
	// extended-length form.
	p = must(t, Input{WorkDir: work, Grants: []Grant{{Object: Object{deep, Dir}}}})
	for _, e := range p.Entries {
		if Key(e.Path) == Key(deep) && e.Apply() != `\\?\`+deep {
			t.Errorf("apply path %q", e.Apply())
		}
	}
}

func execPlan(t *testing.T, stage string) Plan {
	return must(t, Input{WorkDir: work, Grants: []Grant{{Object: Object{stage, Dir}, Exec: true}}})
}

func TestSeedW4StagedProgramRunsFromExecGrant(t *testing.T) {
	stage := `C:\Users\dev\stage`
	p := execPlan(t, stage)
	if m := p.Access(stage+`\findstr.exe`, File); m&(Execute|ReadData) != Execute|ReadData {
		t.Errorf("findstr.exe: %s", m.Names(File))
	}
	if m := p.Access(stage+`\needle.txt`, File); m&WriteData != 0 {
		t.Errorf("an exec grant is writable: %s", m.Names(File))
	}
	if m := p.Access(stage+`\sub`, Dir); m&Execute == 0 {
		t.Errorf("sub directory not traversable: %s", m.Names(Dir))
	}
}

func TestSeedW5StagedProgramByFullPath(t *testing.T) {
	// moat itself starts the program: the same entries must let the
	// container open the image for execution by its full path, with no
	// entry on any parent of the grant (bypass traverse checking).
	stage := `C:\Users\dev\stage`
	p := execPlan(t, stage)
	if m := p.Access(stage+`\findstr.exe`, File); m&Execute == 0 {
		t.Errorf("findstr.exe: %s", m.Names(File))
	}
	for _, e := range p.Entries {
		if !Under(e.Path, stage) && !Under(e.Path, work) {
			t.Errorf("entry outside the grant and workdir: %v", e)
		}
	}
}

func TestSeedW6StagedAtDriveRoot(t *testing.T) {
	stage := `C:\heel-stage`
	p := execPlan(t, stage)
	if m := p.Access(stage+`\findstr.exe`, File); m&Execute == 0 {
		t.Errorf("findstr.exe: %s", m.Names(File))
	}
	for _, e := range p.Entries {
		if IsVolumeRoot(e.Path) {
			t.Errorf("entry on the drive root: %v", e)
		}
	}
	// The drive root itself is never granted.
	for _, root := range []string{`C:\`, `c:\`, `\\srv\share`} {
		_, err := Build(Input{Grants: []Grant{{Object: Object{root, Dir}, Exec: true}}})
		if !errors.Is(err, ErrPath) || !strings.Contains(err.Error(), "volume root") {
			t.Errorf("grant %s: %v", root, err)
		}
	}
}

func TestPlanProtections(t *testing.T) {
	in := Input{WorkDir: work,
		Grants:    []Grant{{Object: Object{home, Dir}, Write: true}, {Object: Object{`C:\Users\dev\.ssh\known_hosts`, File}}},
		Protected: []Object{{`C:\Users\dev\.SSH`, Dir}, {`C:\Users\dev\.aws`, Dir}, {`C:\Users\Other\.ssh`, Dir}},
	}
	p := must(t, in)
	cases := []struct {
		path string
		kind Kind
		read bool
	}{
		{`c:\users\DEV\.ssh\id_ed25519`, File, false}, // case folded: lesson 10's .GiT
		{`C:\Users\dev\.ssh`, Dir, false},
		{`C:\Users\dev\.aws\credentials`, File, false},
		{`C:\Users\dev\.ssh\known_hosts`, File, true}, // the grant of the path itself wins
		{`C:\Users\dev\notes.txt`, File, true},
		{`C:\Users\Other\.ssh\id_rsa`, File, false}, // not granted at all
	}
	for _, c := range cases {
		if got := p.Access(c.path, c.kind)&ReadData != 0; got != c.read {
			t.Errorf("%s readable = %v, want %v", c.path, got, c.read)
		}
	}
	// Not removable through the writable home either.
	for _, path := range []string{`C:\Users\dev\.ssh`, `C:\Users\dev\.aws`} {
		if p.CanRemove(path, Dir) {
			t.Errorf("%s can be removed or renamed", path)
		}
	}
	for _, e := range p.Entries {
		if Key(e.Path) == Key(`C:\Users\Other\.ssh`) {
			t.Errorf("an entry for a protected path outside every grant: %v", e)
		}
	}
}

func TestPlanReadOnlyInsideWorkdir(t *testing.T) {
	hooks := work + `\.git\hooks`
	p := must(t, Input{WorkDir: work, ReadOnly: []Object{{hooks, Dir}}})
	if m := p.Access(hooks+`\pre-commit`, File); m&ReadData == 0 || m&(WriteData|AppendData|Delete) != 0 {
		t.Errorf("hook: %s", m.Names(File))
	}
	if m := p.Access(hooks, Dir); m&(WriteData|AppendData|DeleteChild) != 0 {
		t.Errorf("hooks dir: %s", m.Names(Dir))
	}
	if p.CanRemove(hooks, Dir) || p.CanRemove(hooks+`\pre-commit`, File) {
		t.Error("a read-only path can be removed")
	}
	// The rest of the repository stays writable.
	if m := p.Access(work+`\.git\objects\ab`, Dir); m&WriteData == 0 {
		t.Errorf("objects: %s", m.Names(Dir))
	}
}

func TestPlanRevokesEveryPathItTouches(t *testing.T) {
	for _, tc := range goldenCases {
		p := must(t, tc.in)
		want := map[string]bool{}
		for _, e := range p.Entries {
			want[Key(e.Path)] = true
		}
		got := map[string]bool{}
		for _, r := range p.Revoke {
			if got[Key(r)] {
				t.Errorf("%s: %s revoked twice", tc.name, r)
			}
			got[Key(r)] = true
		}
		if len(got) != len(want) {
			t.Errorf("%s: revokes %d paths, touches %d", tc.name, len(got), len(want))
		}
		for k := range want {
			if !got[k] {
				t.Errorf("%s: %s not revoked", tc.name, k)
			}
		}
	}
}

func TestPlanRefusals(t *testing.T) {
	cases := []struct {
		name string
		in   Input
		want string
	}{
		{"relative workdir", Input{WorkDir: `project`}, "absolute"},
		{"forward slashes", Input{WorkDir: `C:/work`}, "backslashes"},
		{"dotdot", Input{Grants: []Grant{{Object: Object{`C:\a\..\b`, Dir}}}}, ".."},
		{"stream", Input{Grants: []Grant{{Object: Object{`C:\a\file.txt:hidden`, File}}}}, "alternate data stream"},
		{"trailing dot", Input{Protected: []Object{{`C:\Users\dev\.ssh.`, Dir}}}, "dot or a space"},
		{"device", Input{Grants: []Grant{{Object: Object{`C:\a\NUL.txt`, File}}}}, "device"},
		{"device path", Input{Grants: []Grant{{Object: Object{`\\.\PhysicalDrive0`, File}}}}, "device"},
		{"drive root", Input{WorkDir: `D:\`}, "volume root"},
		{"share root", Input{Grants: []Grant{{Object: Object{`\\srv\share`, Dir}}}}, "volume root"},
	}
	for _, c := range cases {
		_, err := Build(c.in)
		if !errors.Is(err, ErrPath) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "acl plan: path ") {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func TestMaskNames(t *testing.T) {
	cases := []struct {
		m    Mask
		k    Kind
		want string
	}{
		{0, File, "0"},
		{Execute, Dir, "TRAVERSE"},
		{Execute, File, "EXECUTE"},
		{ReadData | WriteData, Dir, "LIST_DIRECTORY|ADD_FILE"},
		{ReadData | 0x200, File, "READ_DATA|0x200"},
	}
	for _, c := range cases {
		if got := c.m.Names(c.k); got != c.want {
			t.Errorf("%#x %v: %q, want %q", uint32(c.m), c.k, got, c.want)
		}
	}
}
