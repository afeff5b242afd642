package policy

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// heel's config keys parse to the same Layer as moat's own names.
func TestParseHeelKeys(t *testing.T) {
	dir := filepath.Join(string(filepath.Separator), "etc", "moat")
	name := filepath.Join(dir, "moat.toml")
	tests := []struct {
		name      string
		heel, own string // the same settings, in heel's and in moat's spelling
		want      Layer
	}{
		{"network allow", `network = "allow"`, `network = "allow-all"`, Layer{Network: NetworkAllowAll}},
		{"protect-keychain", "[security]\nprotect-keychain = false\n", "[security]\nprotect-keychains = false\n",
			Layer{Security: moat.SecurityOverrides{ProtectKeychains: ptr(false)}}},
		{"workdir keep", "[workdir]\nkeep = true\n", "[workdir]\nkeep = true\n", Layer{KeepWorkDir: ptr(true)}},
		{"workdir path and keep", "[workdir]\npath = \"job\"\nkeep = false\n", "[workdir]\npath = \"job\"\nkeep = false\n",
			Layer{WorkDir: filepath.Join(dir, "job"), KeepWorkDir: ptr(false)}},
		{"heel's remaining security keys",
			"[security]\nprotect-shell-history = false\nprotect-package-credentials = false\nallow-npu = true\nallow-hardware = true\nallow-tcc-prompts = true\n",
			"[security]\nprotect-shell-history = false\nprotect-package-credentials = false\nallow-npu = true\nallow-hardware = true\nallow-tcc-prompts = true\n",
			Layer{Security: moat.SecurityOverrides{
				ProtectShellHistory: ptr(false), ProtectPackageCredentials: ptr(false),
				AllowNPU: ptr(true), AllowHardware: ptr(true), AllowTCCPrompts: ptr(true),
			}}},
		{"python table with heel's interpreter", "[python]\ninterpreter = \"python3.12\"\npackages = [\"numpy\"]\n",
			"[python]\npython = \"python3.12\"\npackages = [\"numpy\"]\n",
			Layer{Python: Python{Interpreter: "python3.12", Packages: []string{"numpy"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got [2]Layer
			for i, doc := range []string{tt.heel, tt.own} {
				f, err := Parse(name, []byte(doc))
				if err != nil {
					t.Fatalf("Parse(%q): %v", doc, err)
				}
				got[i] = f.Layer
				got[i].Source = nil
			}
			if !reflect.DeepEqual(got[0], tt.want) {
				t.Errorf("heel's spelling gives\n%s\nwant\n%s", show(got[0]), show(tt.want))
			}
			if !reflect.DeepEqual(got[0], got[1]) {
				t.Errorf("heel's spelling gives\n%s\nmoat's\n%s", show(got[0]), show(got[1]))
			}
		})
	}
}

func TestParseHeelKeyErrors(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"both keychain spellings", "[security]\nprotect-keychains = true\nprotect-keychain = false\n",
			`config "x.toml": line 3: security.protect-keychain: given with security.protect-keychains, which names the same switch`},
		{"keep not a boolean", "[workdir]\nkeep = \"yes\"\n", `config "x.toml": line 2: workdir.keep: want true or false, not a string`},
		{"npu not a boolean", "[security]\nallow-npu = 1\n", `config "x.toml": line 2: security.allow-npu: want true or false, not an integer`},
		{"network allow in another case", "network = \"Allow\"\n", `config "x.toml": line 1: network "Allow": want deny, allow-all or allow-list`},
		{"unknown workdir key", "[workdir]\nkeepp = true\n", `config "x.toml": line 2: unknown key "workdir.keepp"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("x.toml", []byte(tt.doc))
			if err == nil || err.Error() != tt.want {
				t.Errorf("Parse = %v\nwant %s", err, tt.want)
			}
		})
	}
}

// keep merges like every scalar: the later layer wins.
func TestMergeKeepWorkDir(t *testing.T) {
	file := parseLayer(t, "[workdir]\nkeep = true\n")
	r, err := Merge(file)
	if err != nil || !r.KeepWorkDir {
		t.Fatalf("Merge = %+v, %v", r.KeepWorkDir, err)
	}
	r, err = Merge(file, Layer{Source: flagNames{}, KeepWorkDir: ptr(false)})
	if err != nil || r.KeepWorkDir {
		t.Fatalf("the command line's keep=false lost: %v, %v", r.KeepWorkDir, err)
	}
}

// A missing working directory is created, every directory on the way,
// and kept; a fresh one to keep is made in the temp directory; and a
// Resolve that fails afterwards removes what it made.
func TestResolveMakesWorkDir(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Run("missing, created with its parents, 0700", func(t *testing.T) {
		wd := filepath.Join(base, "a", "b", "job")
		r, err := Build(Layer{WorkDir: wd})
		if err != nil {
			t.Fatal(err)
		}
		if r.Config.WorkDir != wd || r.KeptWorkDir != "" {
			t.Errorf("workdir %q, kept %q", r.Config.WorkDir, r.KeptWorkDir)
		}
		for _, d := range []string{filepath.Join(base, "a"), filepath.Join(base, "a", "b"), wd} {
			fi, err := os.Stat(d)
			if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
				t.Errorf("%s: %v, %v", d, fi, err)
			}
		}
	})
	t.Run("a later failure removes what was made", func(t *testing.T) {
		wd := filepath.Join(base, "c", "job")
		_, err := Build(Layer{WorkDir: wd, Grants: []moat.PathRequest{{Path: filepath.Join(base, "nope"), Access: moat.READ}}})
		if err == nil || !strings.Contains(err.Error(), "--grant") {
			t.Fatalf("Build = %v", err)
		}
		if _, err := os.Stat(filepath.Join(base, "c")); !os.IsNotExist(err) {
			t.Errorf("a failed Resolve left %s: %v", filepath.Join(base, "c"), err)
		}
	})
	t.Run("an existing one is left as it is", func(t *testing.T) {
		wd := filepath.Join(base, "existing")
		if err := os.Mkdir(wd, 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := Build(Layer{WorkDir: wd, Grants: []moat.PathRequest{{Path: filepath.Join(base, "nope"), Access: moat.READ}}}); err == nil {
			t.Fatal("no error")
		}
		if fi, err := os.Stat(wd); err != nil || fi.Mode().Perm() != 0o755 {
			t.Errorf("an existing workdir was changed: %v, %v", fi, err)
		}
	})
	t.Run("keep makes a fresh one to keep", func(t *testing.T) {
		r, err := Build(Layer{KeepWorkDir: ptr(true)})
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(r.KeptWorkDir)
		if r.KeptWorkDir == "" || r.Config.WorkDir != r.KeptWorkDir || !strings.HasPrefix(filepath.Base(r.KeptWorkDir), "moat-kept-") {
			t.Fatalf("kept %q, workdir %q", r.KeptWorkDir, r.Config.WorkDir)
		}
		if fi, err := os.Stat(r.KeptWorkDir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v", r.KeptWorkDir, fi, err)
		}
	})
	t.Run("keep with a failure removes the fresh one", func(t *testing.T) {
		before, _ := filepath.Glob(filepath.Join(os.TempDir(), "moat-kept-*"))
		_, err := Build(Layer{KeepWorkDir: ptr(true), Grants: []moat.PathRequest{{Path: filepath.Join(base, "nope"), Access: moat.READ}}})
		if err == nil {
			t.Fatal("no error")
		}
		after, _ := filepath.Glob(filepath.Join(os.TempDir(), "moat-kept-*"))
		if len(after) > len(before) {
			t.Errorf("a failed Resolve kept a fresh workdir: %q", after)
		}
	})
	t.Run("keep with a supplied one changes nothing", func(t *testing.T) {
		wd := filepath.Join(base, "supplied")
		if err := os.Mkdir(wd, 0o700); err != nil {
			t.Fatal(err)
		}
		r, err := Build(Layer{WorkDir: wd, KeepWorkDir: ptr(true)})
		if err != nil || r.KeptWorkDir != "" || r.Config.WorkDir != wd {
			t.Errorf("Build = %q, %q, %v", r.Config.WorkDir, r.KeptWorkDir, err)
		}
	})
}
