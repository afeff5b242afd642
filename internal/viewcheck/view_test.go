package viewcheck

import (
	"os"
	"path/filepath"
	"testing"
)

// tree makes, under a temporary root, the places a view is built from,
// and returns the root.
func tree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"sys/bin", "work", "home/.ssh", "home/.cargo", "home/docs", "tmp/shared", "tmp/other", "work/ro"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"home/.ssh/id_ed25519", "home/docs/notes", "tmp/file", "tmp/shared/f", "sys/bin/tool"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "home/.ssh"), filepath.Join(root, "work/ssh-link")); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestCheck(t *testing.T) {
	root := tree(t)
	j := func(p string) string { return filepath.Join(root, p) }
	v := View{
		Read:        []string{j("tmp/shared"), j("tmp/file")},
		Exec:        []string{j("sys"), j("home/.cargo")},
		Write:       []string{j("work")},
		Protected:   []string{j("home/.ssh")},
		ReadOnly:    []string{j("work/ro")},
		Temp:        []string{j("tmp")},
		TempPrivate: true,
	}.Resolve()
	tests := []struct {
		name string
		path string
		need Need
		want Problem
		at   string // "" means path
	}{
		{"system file readable", "sys/bin/tool", NeedRead, OK, ""},
		{"system dir runs", "sys/bin", NeedExec, OK, ""},
		{"system dir not writable", "sys/bin", NeedWrite, ReadOnly, ""},
		{"work dir writable", "work", NeedWrite, OK, ""},
		{"work dir not executable", "work", NeedExec, NoExec, ""},
		{"missing under work can be created", "work/cache/go", NeedWrite, OK, ""},
		{"missing under a read-only root cannot", "sys/cache/go", NeedWrite, ReadOnly, "sys"},
		{"missing and only read: nothing hidden", "nowhere/x", NeedRead, OK, ""},
		{"protected key", "home/.ssh/id_ed25519", NeedRead, Protected, ""},
		{"protected through a link", "work/ssh-link/id_ed25519", NeedRead, Protected, ""},
		{"ungranted home file", "home/docs/notes", NeedRead, Hidden, ""},
		{"curated toolchain dir", "home/.cargo", NeedExec, OK, ""},
		{"shared temp dir named by no root", "tmp/other", NeedRead, PrivateTemp, ""},
		{"shared temp file shown", "tmp/file", NeedRead, OK, ""},
		{"shared temp dir shown, read-only", "tmp/shared", NeedWrite, ReadOnly, ""},
		{"new entry in the private temp", "tmp/new", NeedWrite, OK, ""},
		{"config read-only inside work", "work/ro", NeedWrite, ReadOnly, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, at := v.Check(j(tc.path), tc.need)
			wantAt := j(tc.path)
			if tc.at != "" {
				wantAt = j(tc.at)
			}
			if got != tc.want {
				t.Errorf("Check(%s, %d) = %v; want %v", tc.path, tc.need, got, tc.want)
			}
			if got != OK && at != wantAt {
				t.Errorf("Check(%s) names %s; want %s", tc.path, at, wantAt)
			}
		})
	}
}

// TestCheckPermissive: everything shows, writable, but the hidden home
// (its curated entries shown again), protected paths and shared temp.
func TestCheckPermissive(t *testing.T) {
	root := tree(t)
	j := func(p string) string { return filepath.Join(root, p) }
	v := View{
		Everything: true,
		Hidden:     []string{j("home")},
		Shown:      []string{j("home/.cargo")},
		Protected:  []string{j("home/.ssh")},
		Temp:       []string{j("tmp")},
	}.Resolve()
	v.TempPrivate = true
	tests := []struct {
		path string
		need Need
		want Problem
	}{
		{"sys/bin", NeedWrite | NeedExec, OK},
		{"home/docs/notes", NeedRead, Hidden},
		{"home/.cargo", NeedRead, OK},
		{"home/.ssh/id_ed25519", NeedRead, Protected},
		{"tmp/other", NeedRead, PrivateTemp},
	}
	for _, tc := range tests {
		if got, _ := v.Check(j(tc.path), tc.need); got != tc.want {
			t.Errorf("Check(%s, %d) = %v; want %v", tc.path, tc.need, got, tc.want)
		}
	}
	// Without a private temp the host's shows, read-only.
	v.TempPrivate = false
	if got, _ := v.Check(j("tmp/other"), NeedRead); got != OK {
		t.Errorf("host temp without a private one: %v; want ok", got)
	}
	if got, _ := v.Check(j("tmp/other"), NeedWrite); got != ReadOnly {
		t.Errorf("host temp without a private one, written: %v; want read-only", got)
	}
}

func TestCheckEnvAndArgs(t *testing.T) {
	root := tree(t)
	j := func(p string) string { return filepath.Join(root, p) }
	v := View{Exec: []string{j("sys")}, Write: []string{j("work")}, Protected: []string{j("home/.ssh")}, Temp: []string{j("tmp")}, TempPrivate: true}.Resolve()
	env := []string{
		"GOMODCACHE=" + j("tmp/other"),                           // hidden in temp
		"GOCACHE=" + j("work/gocache"),                           // creatable: fine
		"PYTHONPATH=relative:" + j("home/docs") + ":" + j("sys"), // one hidden entry
		"UNRELATED=" + j("home/docs"),                            // not a toolchain variable
		"PATH=" + j("sys/bin"),                                   // fine
	}
	got := v.CheckEnv(env, nil)
	want := map[string]Finding{
		"GOMODCACHE": {Var: "GOMODCACHE", Path: j("tmp/other"), Problem: PrivateTemp, Need: NeedWrite},
		"PYTHONPATH": {Var: "PYTHONPATH", Path: j("home/docs"), Problem: Hidden, Need: NeedRead},
	}
	if len(got) != len(want) {
		t.Fatalf("findings %+v; want %+v", got, want)
	}
	for _, f := range got {
		if f != want[f.Var] {
			t.Errorf("finding %+v; want %+v", f, want[f.Var])
		}
	}
	// Only the variables the caller chose are judged.
	if got := v.CheckEnv(env, func(n string) bool { return n == "GOCACHE" }); len(got) != 0 {
		t.Errorf("GOCACHE alone: %+v; want nothing", got)
	}
	args := []string{j("sys/bin/tool"), "-v", j("home/.ssh/id_ed25519"), j("work/missing"), j("home/docs/notes"), "relative/x", j("sys/bin/tool")}
	fs := v.CheckArgs(args)
	if len(fs) != 2 || fs[0].Problem != Protected || fs[0].Path != j("home/.ssh/id_ed25519") || fs[1].Problem != Hidden || fs[1].Path != j("home/docs/notes") {
		t.Fatalf("CheckArgs = %+v; want the key (protected) and the notes (hidden)", fs)
	}
}

func FuzzCheckEnv(f *testing.F) {
	for _, s := range []string{"/a:/b", "", ":", "/x/../y", "rel:/", "/\x00"} {
		f.Add(s)
	}
	v := View{Read: []string{"/usr"}, Temp: []string{"/tmp"}}
	f.Fuzz(func(t *testing.T, val string) {
		for _, fd := range v.CheckEnv([]string{"PYTHONPATH=" + val, "GOCACHE=" + val}, nil) {
			if fd.Problem == OK || !filepath.IsAbs(fd.Path) {
				t.Fatalf("finding %+v", fd)
			}
		}
		_ = v.CheckArgs([]string{val})
	})
}
