package policy

import (
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// listenUnix makes a Unix socket at p, closed with the test.
func listenUnix(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
}

// fakeGpgconf writes a gpgconf that runs script into a fresh directory
// and returns the directory, for PATH.
func fakeGpgconf(t *testing.T, script string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "gpgconf"), []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestDiscoverAgents(t *testing.T) {
	dir := t.TempDir()
	sock := func(name string) string { return filepath.Join(dir, name) }
	for _, n := range []string{"ssh", "gpg", "age", "gopass", "conf:colon", "run/gnupg/S.gpg-agent", "run/gnupg/S.keyboxd"} {
		listenUnix(t, sock(n))
	}
	if err := os.WriteFile(sock("file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	noGpgconf := t.TempDir()
	gpgconf := fakeGpgconf(t, `printf 'homedir:%s\nagent-socket:%s\ndirmngr-socket:%s\n' `+dir+` `+strings.ReplaceAll(sock("conf:colon"), ":", "%3a")+` `+sock("missing"))
	failing := fakeGpgconf(t, `echo broken >&2; exit 3`)
	tests := []struct {
		name    string
		env     []string
		opt     AgentOptions
		sockets []string
		vars    []string
		err     string
	}{
		{name: "nothing chosen", env: []string{"SSH_AUTH_SOCK=" + sock("ssh")}},
		{name: "ssh", env: []string{"SSH_AUTH_SOCK=" + sock("ssh")}, opt: AgentOptions{SSH: true}, sockets: []string{sock("ssh")}, vars: []string{"SSH_AUTH_SOCK"}},
		{name: "ssh relative", env: []string{"SSH_AUTH_SOCK=ssh"}, opt: AgentOptions{SSH: true}, vars: []string{"SSH_AUTH_SOCK"}},
		{name: "ssh missing", env: []string{"SSH_AUTH_SOCK=" + sock("missing")}, opt: AgentOptions{SSH: true}, vars: []string{"SSH_AUTH_SOCK"}},
		{name: "ssh a regular file", env: []string{"SSH_AUTH_SOCK=" + sock("file")}, opt: AgentOptions{SSH: true}, vars: []string{"SSH_AUTH_SOCK"}},
		{name: "ssh unset", opt: AgentOptions{SSH: true}},
		{name: "gpg agent info before its colon", env: []string{"PATH=" + noGpgconf, "GPG_AGENT_INFO=" + sock("gpg") + ":123:1"}, opt: AgentOptions{GPG: true}, sockets: []string{sock("gpg")}, vars: []string{"GPG_AGENT_INFO"}},
		{name: "gpg runtime dir", env: []string{"PATH=" + noGpgconf, "XDG_RUNTIME_DIR=" + sock("run")}, opt: AgentOptions{GPG: true}, sockets: []string{sock("run/gnupg/S.gpg-agent"), sock("run/gnupg/S.keyboxd")}},
		{name: "gpgconf", env: []string{"PATH=" + gpgconf}, opt: AgentOptions{GPG: true}, sockets: []string{sock("conf:colon")}},
		{name: "gpgconf failing", env: []string{"PATH=" + failing}, opt: AgentOptions{GPG: true}, err: "gpgconf --list-dirs failed"},
		{name: "age and gopass", env: []string{"AGE_AUTH_SOCK=" + sock("age"), "GOPASS_AGE_AGENT_SOCK=" + sock("gopass")}, opt: AgentOptions{Age: true}, sockets: []string{sock("age"), sock("gopass")}, vars: []string{"AGE_AUTH_SOCK", "GOPASS_AGE_AGENT_SOCK"}},
		{name: "one socket once", env: []string{"PATH=" + noGpgconf, "SSH_AUTH_SOCK=" + sock("ssh"), "GPG_AGENT_INFO=" + sock("ssh")}, opt: AgentOptions{SSH: true, GPG: true}, sockets: []string{sock("ssh")}, vars: []string{"SSH_AUTH_SOCK", "GPG_AGENT_INFO"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := DiscoverAgents(tt.env, tt.opt)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a.Sockets, tt.sockets) || !reflect.DeepEqual(a.Env, tt.vars) {
				t.Fatalf("found %q and variables %q; want %q and %q", a.Sockets, a.Env, tt.sockets, tt.vars)
			}
		})
	}
}

func TestParseGpgconfDirs(t *testing.T) {
	out := "sysconfdir:/etc/gnupg\nhomedir:/h/.gnupg\nsocketdir:/run/user/1/gnupg\nagent-socket:/run/user/1/gnupg/S.gpg-agent\r\nagent-ssh-socket:/a%3ab\nkeyboxd-socket:/bad%zz\ndirmngr-socket:/d%25\n"
	want := []string{"/run/user/1/gnupg/S.gpg-agent", "/a:b", "/d%"}
	if got := parseGpgconfDirs(out); !reflect.DeepEqual(got, want) {
		t.Fatalf("sockets %q, want %q", got, want)
	}
}
