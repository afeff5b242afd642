//go:build linux

package escape_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/ipc"
)

// dirProbe is what the IPC handler of TestHostInputIPCDir read of the
// caller's directory: through the path string, and through Call.DirFile.
type dirProbe struct {
	ViaString string `json:"via_string"`
	ViaFile   string `json:"via_file"`
	DirErr    string `json:"dir_err"`
}

// dirProbeRouter registers readkey, whose handler waits for the sandbox to
// move its directory, then reads "key" there both ways.
func dirProbeRouter(t *testing.T) *ipc.Router {
	t.Helper()
	r := ipc.NewRouter()
	if err := ipc.Register(r, "readkey", func(_ context.Context, _ struct{}, call ipc.Call) (dirProbe, error) {
		time.Sleep(700 * time.Millisecond) // the sandbox swaps its directory meanwhile
		var p dirProbe
		if b, err := os.ReadFile(filepath.Join(call.Dir, "key")); err == nil {
			p.ViaString = string(b)
		}
		if call.DirErr != nil {
			p.DirErr = call.DirErr.Error()
		}
		if call.DirFile != nil {
			fd, err := unix.Openat(int(call.DirFile.Fd()), "key", unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err == nil {
				f := os.NewFile(uintptr(fd), "key")
				b := make([]byte, 64)
				n, _ := f.Read(b)
				f.Close()
				p.ViaFile = string(b[:n])
			}
		}
		return p, nil
	}); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestHostInputIPCDir: a handler cannot be made to act on a directory the
// sandbox cannot reach by the caller's directory. The sandbox calls from
// its working directory, then, while the handler runs, renames that
// directory away and puts a link to a secret host directory in its place
// (renamed), or calls from a link it then points at the secret
// (symlinked). The path string (the positive control: what handlers had)
// reaches the secret; Call.DirFile, opened beneath the sandbox's root
// without links, reaches the directory the caller was really in, or is
// nil.
func TestHostInputIPCDir(t *testing.T) {
	cases := []struct {
		name, script string
		wantFile     string // what DirFile reads: "" for a nil DirFile
	}{
		{"renamed", `mkdir real && echo decoy > real/key && cd real && { readkey > ../out 2>&1 & } && sleep 0.3 && cd .. && mv real old && ln -s "$SECRET" real; wait`, "decoy"},
		{"symlinked", `mkdir real && echo decoy > real/key && ln -s real link && cd link && { readkey > ../out 2>&1 & } && sleep 0.3 && cd .. && ln -sfn "$SECRET" link; wait`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			secret := t.TempDir()
			if err := os.WriteFile(filepath.Join(secret, "key"), []byte("SECRET\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			work := t.TempDir()
			sb := newSandbox(t, moat.Config{IPC: dirProbeRouter(t), Isolation: moat.IsolationDefault, WorkDir: work})
			r := inSandbox(t, sb, "/bin/sh", "-c", strings.ReplaceAll(c.script, "$SECRET", secret))
			out, _ := os.ReadFile(filepath.Join(work, "out"))
			t.Logf("%s\nout: %s", r, out)
			if r.Code != 0 {
				t.Fatalf("the probe failed: %s", r)
			}
			var got dirProbe
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("the handler's answer: %v: %s", err, out)
			}
			if !strings.Contains(got.ViaString, "SECRET") {
				t.Fatalf("control: the path string did not reach the secret, so the probe cannot tell: %s", out)
			}
			if strings.TrimSpace(got.ViaFile) != c.wantFile {
				t.Fatalf("Call.DirFile read %q, want %q", got.ViaFile, c.wantFile)
			}
			if c.wantFile == "" && got.DirErr == "" {
				t.Fatalf("a nil DirFile without DirErr: %s", out)
			}
		})
	}
}
