//go:build linux

package workloads_test

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
)

// hostVenv builds, on the host, a venv from the system interpreter holding
// the workloads' probe wheel, offline, with or without system site-packages.
func hostVenv(t *testing.T, systemSite bool) *moat.Venv {
	t.Helper()
	need(t, python3)
	wheels := t.TempDir()
	if err := moattest.WriteFile(filepath.Join(wheels, wheelPackage+"-"+wheelVersion+"-py3-none-any.whl"), buildWheel(t), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := (&moat.VenvManager{CacheDir: t.TempDir()}).Create(context.Background(), moat.VenvConfig{
		Path: filepath.Join(t.TempDir(), "venv"), Python: python3, Backend: moat.VenvPython,
		SystemSitePackages: systemSite, Packages: []string{wheelPackage}, FindLinks: []string{wheels}, NoIndex: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// pyRun runs the sandbox's Python (Sandbox.PythonCommand) with args.
func pyRun(t *testing.T, sb *moat.Sandbox, args ...string) result {
	t.Helper()
	return runCmd(t, sb.PythonCommand(args...), "python "+strings.Join(args, " "))
}

// A venv built on the host serves the sandbox in both modes: its package
// imports and its console script runs (the venv is executable, and
// written before the sandbox existed). In build mode the code also makes
// its own venv in the working directory, installs into it and runs its
// script, while the host's venv stays read-only: build mode opens the
// working directory, not the configured venv.
func TestPythonHostVenv(t *testing.T) {
	v := hostVenv(t, false)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := config(dir, m.build)
			cfg.Python = &moat.PythonConfig{Venv: v.Path}
			sb := newSandbox(t, cfg)
			r := pyRun(t, sb, "-c", "import "+wheelPackage+" as p, sys; print(p.MOAT, sys.prefix)")
			if !r.ok() || strings.TrimSpace(r.Out) != "wheel-installed "+v.Path {
				t.Fatalf("the host venv's package: %s", r)
			}
			mustPass(t, "the host venv's console script", run(t, sb, "", filepath.Join(v.Path, "bin", "moat-wl-probe")))
			r = pyRun(t, sb, "-c", "open('"+v.Path+"/pyvenv.cfg', 'a').write('x')")
			if r.ok() {
				t.Fatalf("the host venv was writable: %s", r)
			}
			if !m.build {
				return
			}
			wheels := filepath.Join(dir, "wheels")
			os.Mkdir(wheels, 0o755)
			if err := moattest.WriteFile(filepath.Join(wheels, wheelPackage+"-"+wheelVersion+"-py3-none-any.whl"), buildWheel(t), 0o644); err != nil {
				t.Fatal(err)
			}
			mustPass(t, "python3 -m venv in the working directory", run(t, sb, "", python3, "-m", "venv", "own"))
			mustPass(t, "own/bin/pip install", run(t, sb, "", "own/bin/pip", "install", "--no-index", "--find-links", "wheels", wheelPackage))
			r = run(t, sb, "", "own/bin/moat-wl-probe")
			if !r.ok() || strings.TrimSpace(r.Out) != "console-script-ran" {
				t.Fatalf("the code's own venv's script: %s", r)
			}
			r = run(t, sb, "", "own/bin/python", "-c", "import sys, "+wheelPackage+"; print(sys.prefix)")
			if !r.ok() || strings.TrimSpace(r.Out) != filepath.Join(dir, "own") {
				t.Fatalf("the code's own venv: %s", r)
			}
		})
	}
}

// modelScript is data-science code of the kind a model writes: load a CSV,
// aggregate it with pandas, plot with matplotlib to /tmp, copy the plot to
// the working directory.
const modelScript = `
import shutil
import numpy as np
import pandas as pd
import matplotlib.pyplot as plt

df = pd.read_csv("sales.csv")
summary = df.groupby("region")["revenue"].agg(["sum", "mean"]).sort_values("sum", ascending=False)
print(summary.to_string())
print("total", int(np.sum(df["revenue"].to_numpy())))

fig, ax = plt.subplots(figsize=(4, 3))
summary["sum"].plot.bar(ax=ax)
ax.set_title("Revenue by region")
fig.tight_layout()
fig.savefig("/tmp/plot.png")
shutil.copy("/tmp/plot.png", "plot.png")
print("backend", plt.get_backend())
`

// Real data-science code, through Debian's numpy, pandas and matplotlib
// reached by system site-packages: the plot it copies to the working
// directory is a valid PNG on the host.
func TestPythonDataScience(t *testing.T) {
	v := hostVenv(t, true)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"sales.csv": "region,revenue\nnorth,120\nsouth,80\nnorth,30\neast,200\nsouth,20\n",
			})
			cfg := config(dir, m.build)
			cfg.Python = &moat.PythonConfig{Venv: v.Path}
			sb := newSandbox(t, cfg)
			r, err := sb.RunPython(context.Background(), modelScript)
			if err != nil {
				t.Fatalf("the model's script: %v\n%s%s", err, r.Stdout, r.Stderr)
			}
			out := string(r.Stdout)
			for _, want := range []string{"east", "total 450", "backend agg"} {
				if !strings.Contains(strings.ToLower(out), want) {
					t.Fatalf("output lacks %q:\n%s", want, out)
				}
			}
			data, err := os.ReadFile(filepath.Join(dir, "plot.png"))
			if err != nil {
				t.Fatalf("the plot was not copied to the working directory: %v", err)
			}
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("plot.png is not a valid PNG: %v", err)
			}
			if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
				t.Fatalf("plot.png is %v", b)
			}
			if _, err := os.Lstat("/tmp/plot.png"); err == nil {
				t.Fatal("the sandbox's /tmp/plot.png reached the host's /tmp")
			}
		})
	}
}

// A compiled extension the distribution ships (python3-yaml's _yaml)
// loads from the system site-packages through the venv, in both modes.
func TestPythonNativeExtension(t *testing.T) {
	v := hostVenv(t, true)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			cfg := config(t.TempDir(), m.build)
			cfg.Python = &moat.PythonConfig{Venv: v.Path}
			sb := newSandbox(t, cfg)
			r := pyRun(t, sb, "-c", "import yaml, yaml._yaml as c; print(c.__file__.endswith('.so'), yaml.load('a: [1, 2]', Loader=yaml.CSafeLoader))")
			if !r.ok() || strings.TrimSpace(r.Out) != "True {'a': [1, 2]}" {
				t.Fatalf("the compiled _yaml did not load: %s", r)
			}
		})
	}
}
