package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/ipc"
)

// serveIPC serves a router with one command, greet, on a fresh socket
// named by MOAT_IPC_ENDPOINT for the test.
func serveIPC(t *testing.T) {
	t.Helper()
	r := ipc.NewRouter()
	err := ipc.Register(r, "greet", func(_ context.Context, a struct {
		Name string `json:"name"`
		Loud bool   `json:"loud"`
	}, _ ipc.Call) (string, error) {
		if a.Name == "" {
			return "", ipc.Errorf("no_name", "whom should I greet?")
		}
		s := "hello " + a.Name
		if a.Loud {
			s = strings.ToUpper(s)
		}
		return s + "\n", nil
	}, ipc.Positional("name"), ipc.Summary("greets someone"))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "cliipc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := ipc.Listen(filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &ipc.Server{Router: r}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	t.Setenv(ipc.EndpointEnv, filepath.Join(dir, "s"))
}

// TestIPCCommand: moat ipc NAME is the same client as a shim: the
// command's own flags pass through untouched, output and errors and
// exit statuses are the client's.
func TestIPCCommand(t *testing.T) {
	serveIPC(t)
	cases := []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"ipc", "greet", "ada"}, 0, "hello ada\n", ""},
		{[]string{"ipc", "greet", "--name=ada", "--loud"}, 0, "HELLO ADA\n", ""},
		{[]string{"ipc", "greet"}, 1, "", "greet: whom should I greet?\n"},
		{[]string{"ipc", "greet", "--help"}, 0, "usage: greet [flags] [NAME]\ngreets someone\n", ""},
		{[]string{"ipc", "greet", "--nope"}, 2, "", "greet: unknown flag --nope (see greet -h)\n"},
		{[]string{"ipc", "absent"}, 1, "", "absent: unknown command \"absent\"\n"},
		{[]string{"ipc"}, 0, "greet\tgreets someone\n", ""},
		{[]string{"ipc", "--help"}, 0, "moat ipc calls the host command NAME", ""},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errs := executeCaptured(t, c.args...)
			if code != c.code || !strings.HasPrefix(out, c.stdout) || errs != c.stderr {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, out, errs, c.code, c.stdout, c.stderr)
			}
		})
	}
	t.Setenv(ipc.EndpointEnv, "")
	if code, _, errs := executeCaptured(t, "ipc"); code != exitUsage || !strings.Contains(errs, "MOAT_IPC_ENDPOINT is not set") {
		t.Fatalf("without an endpoint: %d %q", code, errs)
	}
}
