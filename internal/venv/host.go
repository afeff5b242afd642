package venv

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// hostDir is the working directory of every tool moat runs on the host: a
// directory no sandbox can write, so that nothing there (a venv.py, a
// pip/ package) is found by the tool.
const hostDir = "/"

// hostEnvKeys are the only host variables a tool moat runs on the host
// inherits; PYTHON*, PIP_*, UV_*, VIRTUAL_ENV and the rest never reach it.
var hostEnvKeys = []string{"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE"}

// HostEnv is the environment of a tool moat runs on the host: hostEnvKeys
// from environ (os.Environ's form), then extra.
func HostEnv(environ []string, extra ...string) []string {
	var out []string
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		for _, want := range hostEnvKeys {
			if k == want {
				out = append(out, kv)
				break
			}
		}
	}
	return append(out, extra...)
}

// runHost runs argv, a trusted tool (the base interpreter with -I, or
// uv with --no-config), on the host: from hostDir, with HostEnv plus
// extra. It returns, on failure, the gist of what the tool said, and
// otherwise its standard output (at most tailLimit bytes).
func runHost(ctx context.Context, argv []string, extra ...string) (string, error) {
	if !filepath.IsAbs(argv[0]) {
		return "", &exec.Error{Name: argv[0], Err: exec.ErrNotFound}
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = hostDir
	cmd.Env = HostEnv(os.Environ(), extra...)
	hostProcess(cmd) // hostproc_*.go
	var stdout, stderr tailBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return Gist(stderr.String(), lastLines(stdout.String()), err), err
	}
	return stdout.String(), nil
}

// tailLimit bounds what is kept of a tool's output.
const tailLimit = 64 << 10

// tailBuffer keeps the last tailLimit bytes written to it: the output of
// an install sandbox is hostile data and must not grow moat's memory.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= tailLimit {
		t.b = append(t.b[:0], p[len(p)-tailLimit:]...)
		return n, nil
	}
	if over := len(t.b) + len(p) - tailLimit; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	t.b = append(t.b, p...)
	return n, nil
}

func (t *tailBuffer) String() string { return string(t.b) }

// lastLines is the last few non-empty lines of s.
func lastLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	if len(out) > 5 {
		out = out[len(out)-5:]
	}
	return out
}

// systemSitePackages is the base interpreter's own site-packages, asked of
// the trusted interpreter itself, isolated, with no site import.
func systemSitePackages(ctx context.Context, interp string) ([]string, error) {
	out, err := runHost(ctx, []string{interp, "-I", "-S", "-c", "import site\nfor d in site.getsitepackages(): print(d)"})
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); filepath.IsAbs(l) {
			dirs = append(dirs, l)
		}
	}
	return dirs, nil
}
