//go:build linux

package escape_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
)

// buildPkg is a source distribution whose build backend (in-tree, PEP
// 517, so pip needs nothing from an index) runs code while pip installs
// it, as any sdist's setup.py does.
const buildPkg = "moat_esc_build"

// buildBackend is the backend's source: probe() tries to write two host
// places, read a secret in the home and reach a listener on the host's
// loopback; build_wheel records what it could into the wheel it builds.
func buildBackend(writeTo []string, secret string, port int) string {
	targets, _ := json.Marshal(writeTo)
	return `import base64, hashlib, json, os, socket, zipfile
WRITE_TO = json.loads(` + strconv.Quote(string(targets)) + `)
SECRET = ` + strconv.Quote(secret) + `
PORT = ` + strconv.Itoa(port) + `

def probe():
    res = {}
    for i, p in enumerate(WRITE_TO):
        try:
            open(p, 'w').write('escaped')
            res['write%d' % i] = True
        except Exception:
            res['write%d' % i] = False
    try:
        open(SECRET).read()
        res['read'] = True
    except Exception:
        res['read'] = False
    try:
        socket.create_connection(('127.0.0.1', PORT), timeout=3).close()
        res['connect'] = True
    except Exception:
        res['connect'] = False
    return res

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    info = '` + buildPkg + `-1.0.dist-info/'
    files = {
        '` + buildPkg + `/__init__.py': '',
        '` + buildPkg + `/result.json': json.dumps(probe()),
        info + 'METADATA': 'Metadata-Version: 2.1\nName: ` + buildPkg + `\nVersion: 1.0\n',
        info + 'WHEEL': 'Wheel-Version: 1.0\nGenerator: moat-escape\nRoot-Is-Purelib: true\nTag: py3-none-any\n',
    }
    name = '` + buildPkg + `-1.0-py3-none-any.whl'
    record = ''
    with zipfile.ZipFile(os.path.join(wheel_directory, name), 'w') as z:
        for n, c in files.items():
            z.writestr(n, c)
            d = base64.urlsafe_b64encode(hashlib.sha256(c.encode()).digest()).rstrip(b'=').decode()
            record += '%s,sha256=%s,%d\n' % (n, d, len(c))
        record += info + 'RECORD,,\n'
        z.writestr(info + 'RECORD', record)
    return name
`
}

// writeSdist writes buildPkg's sdist, with backend as its build backend,
// into dir.
func writeSdist(t *testing.T, dir, backend string) {
	t.Helper()
	writeSdistNamed(t, dir, buildPkg, backend)
}

// writeSdistNamed writes the sdist of pkg 1.0, with backend as its build
// backend, into dir.
func writeSdistNamed(t *testing.T, dir, pkg, backend string) {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	top := pkg + "-1.0/"
	for _, f := range [][2]string{
		{"pyproject.toml", "[build-system]\nrequires = []\nbuild-backend = \"backend\"\nbackend-path = [\".\"]\n"},
		{"PKG-INFO", "Metadata-Version: 2.1\nName: " + pkg + "\nVersion: 1.0\n"},
		{"backend.py", backend},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: top + f[0], Mode: 0o644, Size: int64(len(f[1])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(f[1]))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	gz.Close()
	if err := moattest.WriteFile(filepath.Join(dir, pkg+"-1.0.tar.gz"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A package's own build code runs while pip installs it, and moat installs
// in a sandbox of its own: that code cannot write outside the venv and its
// build cache (neither the user's temporary files nor the home), cannot
// read a secret in the home, and, installing from --find-links only with
// --no-index, has no network at all, not even the host's loopback. The
// positive control runs the same probe on the host, as pip on the host
// used to: every one of them succeeds.
func TestVenvInstallSandbox(t *testing.T) {
	need(t, "/usr/bin/python3")
	h := home(t)
	outside := t.TempDir()
	writeTo := []string{filepath.Join(outside, "escaped"), filepath.Join(h, ".moat-esc-venv-escaped")}
	for _, p := range writeTo {
		t.Cleanup(func() { os.Remove(p) })
	}
	secret := filepath.Join(h, ".moat-esc-venv-secret")
	plant(t, secret, "s3cret")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := moattest.ServeReply(t, ln, "hello\n")
	backend := buildBackend(writeTo, secret, ln.Addr().(*net.TCPAddr).Port)
	dists := t.TempDir()
	os.Chmod(dists, 0o755)
	writeSdist(t, dists, backend)

	v, err := (&moat.VenvManager{CacheDir: t.TempDir()}).Create(context.Background(), moat.VenvConfig{
		Path: filepath.Join(t.TempDir(), "venv"), Python: "/usr/bin/python3", Backend: moat.VenvPython,
		Packages: []string{buildPkg}, FindLinks: []string{dists}, NoIndex: true,
	})
	if err != nil {
		t.Fatalf("installing the sdist: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(sitePackages(t, v.Path), buildPkg, "result.json"))
	if err != nil {
		t.Fatalf("the built package: %v", err)
	}
	var got map[string]bool
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("the probe's result %q: %v", data, err)
	}
	for _, k := range []string{"write0", "write1", "read", "connect"} {
		if v, ok := got[k]; !ok || v {
			t.Errorf("the package's build code in the install sandbox: %s = %v (present %v), want false", k, v, ok)
		}
	}
	for _, p := range writeTo {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("the build code wrote %s on the host", p)
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the build code reached the host's loopback listener %d times", n)
	}

	// The positive control: the same probe on the host.
	c := exec.Command("/usr/bin/python3", "-c", backend+"\nprint(json.dumps(probe()))")
	c.Dir = t.TempDir()
	out, err := c.CombinedOutput()
	var ctl map[string]bool
	if err != nil || json.Unmarshal(bytes.TrimSpace(out), &ctl) != nil {
		t.Fatalf("control: %v %s", err, out)
	}
	for _, k := range []string{"write0", "write1", "read", "connect"} {
		if !ctl[k] {
			t.Errorf("control: %s failed on the host too, so the probe proves nothing: %s", k, out)
		}
	}
}
