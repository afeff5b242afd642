//go:build linux

package moat_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// copyTrue writes an executable copy of /bin/true into dir.
func copyTrue(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "app")
	if err := os.WriteFile(p, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// wxLayer returns the report's write-xor-execute layer.
func wxLayer(t *testing.T, sb *moat.Sandbox) moat.Layer {
	t.Helper()
	for _, l := range sb.Report().Layers {
		if l.Name == "write-xor-execute" {
			return l
		}
	}
	t.Fatalf("no write-xor-execute layer in\n%s", sb.Report())
	return moat.Layer{}
}

// Build mode is off by default, says so in Report, and without it a file
// in the working directory is refused as a command with a refusal naming
// --build; with it, the same file runs, GOTMPDIR is a private executable
// scratch directory, and Close removes it.
func TestBuildMode(t *testing.T) {
	for _, build := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "build"}[build], func(t *testing.T) {
			sb, err := moat.New(moat.Config{Isolation: moat.IsolationDefault, Build: build})
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close()
			l := wxLayer(t, sb)
			if l.Active == build || (build && !strings.Contains(l.Detail, sb.WorkDir())) || !strings.Contains(l.Detail, "--build") {
				t.Errorf("layer = %+v", l)
			}
			app := copyTrue(t, sb.WorkDir())
			err = sb.Command(app).Run()
			var refused []moat.Refusal
			for _, r := range sb.Refusals() {
				if r.Kind == "exec" {
					refused = append(refused, r)
				}
			}
			out, gerr := sb.Command("/bin/sh", "-c", `printf %s "$GOTMPDIR"`).Output()
			if gerr != nil {
				t.Fatal(gerr)
			}
			gotmp := string(out)
			if !build {
				if !errors.Is(err, fs.ErrPermission) {
					t.Fatalf("running a written file: err = %v, want a permission error", err)
				}
				if len(refused) != 1 || refused[0].Subject != app || refused[0].Allow != "--build, Config.Build" || !strings.Contains(refused[0].Detail, "write-xor-execute") {
					t.Fatalf("refusals = %+v", sb.Refusals())
				}
				if gotmp != "" {
					t.Errorf("GOTMPDIR = %q without build mode", gotmp)
				}
				return
			}
			if err != nil || len(refused) != 0 {
				t.Fatalf("build mode: err = %v, refusals %+v", err, refused)
			}
			if gotmp == "" || strings.HasPrefix(gotmp, sb.WorkDir()) {
				t.Fatalf("GOTMPDIR = %q, want a scratch directory outside the working directory", gotmp)
			}
			if err := sb.Command("/bin/sh", "-c", `cp /bin/true "$GOTMPDIR/t" && "$GOTMPDIR/t"`).Run(); err != nil {
				t.Fatalf("a binary in GOTMPDIR does not run in build mode: %v", err)
			}
			sb.Close()
			if _, err := os.Lstat(gotmp); !os.IsNotExist(err) {
				t.Fatalf("Close left the build scratch %s: %v", gotmp, err)
			}
		})
	}
}

// A shell that exits 126 outside build mode, as `./app` refused by
// write-xor-execute makes it, leaves a refusal that names --build; in build
// mode the same script runs.
func TestBuildModeExit126(t *testing.T) {
	for _, build := range []bool{false, true} {
		sb := newSandbox(t, moat.Config{Build: build})
		copyTrue(t, sb.WorkDir())
		err := sb.Command("/bin/sh", "-c", "./app").Run()
		var ee *moat.ExitError
		if build {
			if err != nil {
				t.Fatalf("build mode: %v", err)
			}
			if len(sb.Refusals()) != 0 {
				t.Fatalf("build mode: refusals %+v", sb.Refusals())
			}
			continue
		}
		if !errors.As(err, &ee) || ee.ExitCode() != 126 {
			t.Fatalf("./app: err = %v, want exit 126", err)
		}
		rs := sb.Refusals()
		if len(rs) != 1 || rs[0].Kind != "exec" || rs[0].Allow != "--build, Config.Build" {
			t.Fatalf("refusals = %+v", rs)
		}
	}
}

// Report says when AllowPipInstall gives up write-xor-execute for a venv,
// and not without it.
func TestReportNamesPipInstall(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("needs /usr/bin/python3")
	}
	v, err := (&moat.VenvManager{CacheDir: t.TempDir()}).Create(context.Background(), moat.VenvConfig{
		Path: filepath.Join(t.TempDir(), "venv"), Python: "/usr/bin/python3", Backend: moat.VenvPython,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, allow := range []bool{false, true} {
		sb, err := moat.New(moat.Config{Isolation: moat.IsolationDefault, Python: &moat.PythonConfig{Venv: v.Path, AllowPipInstall: allow}})
		if err != nil {
			t.Fatal(err)
		}
		l := wxLayer(t, sb)
		sb.Close()
		if said := strings.Contains(l.Detail, "AllowPipInstall") && strings.Contains(l.Detail, v.Path); said != allow {
			t.Errorf("AllowPipInstall=%v: the layer's detail names it = %v: %q", allow, said, l.Detail)
		}
	}
}
