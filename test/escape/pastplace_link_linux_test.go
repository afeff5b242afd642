//go:build linux

package escape_test

// A link that a sandbox planted in its writable place does not lead a
// later run's path flag (--readable, --writable, --workdir, --home, --venv, --allow-socket, moat exec's cwd, and the files
// moat writes for the caller: --report-json, --audit-log) to a protected
// or private path: a path that passes through a link in a place moat
// recorded as writable by an earlier sandbox is refused. The control is
// the same probe with that record gone (a fresh state directory), where
// the flag follows the link, as it follows a link the user made.

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestPastPlaceLinkNotFollowed(t *testing.T) {
	home := t.TempDir() // a home of the test's own, holding the secrets
	writeFile(t, filepath.Join(home, ".aws", "credentials"), "AWS-SECRET")
	if err := os.MkdirAll(filepath.Join(home, "docs"), 0o700); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	env := func(state string) []string { return []string{"HOME=" + home, "XDG_STATE_HOME=" + state} }
	// An earlier run's sandbox plants the links in its working directory,
	// which moat records as a place it could write.
	w := t.TempDir()
	if r := moatCLI(t, w, env(state), "run", "--workdir", w, "--", "sh", "-c",
		"ln -s "+filepath.Join(home, ".aws")+" aws && ln -s "+home+" home"); r.Code != 0 {
		t.Fatalf("planting run: %s", r)
	}
	cases := []struct {
		name string
		args func(other string) []string
		// through reports whether the probe reached the home.
		through func(r result) bool
	}{
		{"--readable through the link reads ~/.aws",
			func(other string) []string {
				return []string{"run", "--workdir", other, "--readable", filepath.Join(w, "aws"), "--", "cat", filepath.Join(home, ".aws", "credentials")}
			},
			func(r result) bool { return strings.Contains(r.Stdout, "AWS-SECRET") }},
		{"--workdir through the link writes in the home",
			func(string) []string {
				return []string{"run", "--workdir", filepath.Join(w, "home", "docs"), "--", "sh", "-c", "echo PLANTED >> private.txt"}
			},
			func(result) bool {
				b, _ := os.ReadFile(filepath.Join(home, "docs", "private.txt"))
				os.Remove(filepath.Join(home, "docs", "private.txt"))
				return strings.Contains(string(b), "PLANTED")
			}},
		{"--writable through the link writes in the home",
			func(other string) []string {
				return []string{"run", "--workdir", other, "--writable", filepath.Join(w, "home", "docs"), "--", "sh", "-c", "echo PLANTED >> " + filepath.Join(home, "docs", "private.txt")}
			},
			func(result) bool {
				b, _ := os.ReadFile(filepath.Join(home, "docs", "private.txt"))
				os.Remove(filepath.Join(home, "docs", "private.txt"))
				return strings.Contains(string(b), "PLANTED")
			}},
		{"--report-json through the link writes in the home",
			func(other string) []string {
				return []string{"run", "--workdir", other, "--report-json", filepath.Join(w, "home", ".profile"), "--", "true"}
			},
			func(result) bool {
				_, err := os.Stat(filepath.Join(home, ".profile"))
				os.Remove(filepath.Join(home, ".profile"))
				return err == nil
			}},
		{"--audit-log through the link writes in the home",
			func(other string) []string {
				return []string{"run", "--workdir", other, "--network", "allow-all", "--audit-log", filepath.Join(w, "home", "audit.log"), "--", "true"}
			},
			func(result) bool {
				_, err := os.Stat(filepath.Join(home, "audit.log"))
				os.Remove(filepath.Join(home, "audit.log"))
				return err == nil
			}},
	}
	// A host socket in the home (an agent's, say), which a grant of it
	// would let the sandbox reach.
	sock := filepath.Join(home, "x.sock")
	serveUnixLine(t, sock, "SOCKET-SECRET")
	doc := filepath.Join(t.TempDir(), "policy.json")
	writeFile(t, doc, `{"command": ["sh", "-c", "echo PLANTED >> `+filepath.Join(home, "docs", "private.txt")+`"], "cwd": "`+filepath.Join(w, "home", "docs")+`", "filesystem": {"writable": ["."]}}`)
	wroteDocs := func(result) bool {
		b, _ := os.ReadFile(filepath.Join(home, "docs", "private.txt"))
		os.Remove(filepath.Join(home, "docs", "private.txt"))
		return strings.Contains(string(b), "PLANTED")
	}
	cases = append(cases, []struct {
		name    string
		args    func(other string) []string
		through func(r result) bool
	}{
		{"--allow-socket through the link reaches a socket in the home",
			func(other string) []string {
				return []string{"run", "--workdir", other, "--allow-socket", filepath.Join(w, "home", "x.sock"), "--", "python3", "-c",
					"import socket; s = socket.socket(socket.AF_UNIX); s.connect(" + strconv.Quote(sock) + "); print(s.recv(100).decode())"}
			},
			func(r result) bool { return strings.Contains(r.Stdout, "SOCKET-SECRET") }},
		{"moat exec's cwd through the link writes in the home",
			func(string) []string { return []string{"exec", "--policy", doc} },
			wroteDocs},
		{"--home through the link writes in the home",
			func(other string) []string {
				return []string{"run", "--workdir", other, "--home", filepath.Join(w, "home", "docs"), "--", "sh", "-c", "echo PLANTED >> \"$HOME/private.txt\""}
			},
			wroteDocs},
		{"--venv through the link builds in the home",
			func(string) []string {
				return []string{"python", "--venv", filepath.Join(w, "home", "docs", "venv"), "-c", "print(1)"}
			},
			func(result) bool {
				_, err := os.Stat(filepath.Join(home, "docs", "venv"))
				os.RemoveAll(filepath.Join(home, "docs", "venv"))
				return err == nil
			}},
	}...)
	for _, tc := range cases {
		attack(t, tc.name, func(t *testing.T, lifted bool) result {
			st := state
			if lifted {
				st = t.TempDir() // no record of the planting run's place
			}
			r := moatCLI(t, t.TempDir(), env(st), tc.args(t.TempDir())...)
			if !lifted && !tc.through(r) && (r.Code != 2 || !strings.Contains(r.Stderr, "a place a sandbox of an earlier run could write")) {
				t.Errorf("refused without saying why (exit 2, naming the earlier run's place): %s", r)
			}
			r.Stdout += map[bool]string{true: "\nREACHED-HOME"}[tc.through(r) || strings.Contains(r.Stdout, "AWS-SECRET")]
			return r
		}, func(r result) bool { return !strings.Contains(r.Stdout, "REACHED-HOME") })
	}
}

// serveUnixLine listens on the Unix socket path until the test ends and
// answers every connection with line and a newline.
func serveUnixLine(t *testing.T, path, line string) {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(line + "\n"))
			c.Close()
		}
	}()
}
