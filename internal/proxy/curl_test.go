package proxy

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// runCurl runs curl with args (plus -sS and a time limit) and an empty
// environment, so that no proxy variable of this machine interferes. It
// returns the HTTP status curl printed, the body, curl's exit code and its
// error output.
func runCurl(t *testing.T, args ...string) (status, body string, code int, errOut string) {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("SKIPPED LOUDLY: curl is not installed; the curl interoperability tests did not run")
	}
	out := t.TempDir() + "/body"
	args = append([]string{"-sS", "--max-time", "10", "-o", out, "-w", "%{http_code}"}, args...)
	cmd := exec.Command("curl", args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	stdout, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("curl: %v", err)
	}
	b, _ := os.ReadFile(out)
	t.Logf("curl %s: status %s, exit %d, %v, stderr %q", strings.Join(args[7:], " "), stdout, code, time.Since(start).Round(time.Millisecond), stderr.String())
	return string(stdout), string(b), code, stderr.String()
}

func TestCurl(t *testing.T) {
	o := startOrigin(t, false)
	tlsOrigin := startOrigin(t, true)
	tests := []struct {
		name       string
		credential string
		args       func(proxy string) []string
		status     string
		body       string // substring
		code       int    // curl's exit code
		stderr     string // substring of curl's error output
		record     Record // compared without Time and IP; empty Host: not checked
	}{
		{
			name: "http allowed",
			args: func(p string) []string {
				return []string{"-x", "http://" + p, fmt.Sprintf("http://allowed.test:%d/curl", o.port)}
			},
			status: "200", body: "hello from /curl",
			record: Record{Protocol: "http", Host: "allowed.test", Port: o.port, Allowed: true},
		},
		{
			name:   "http denied",
			args:   func(p string) []string { return []string{"-x", "http://" + p, "http://denied.test/"} },
			status: "403", body: `moat: network policy allow-list: "denied.test" is not allowed: host not in allow-list`,
			record: Record{Protocol: "http", Host: "denied.test", Port: 80, Reason: "host not in allow-list"},
		},
		{
			name: "http through a CONNECT tunnel",
			args: func(p string) []string {
				return []string{"-p", "-x", "http://" + p, fmt.Sprintf("http://allowed.test:%d/tunnel", o.port)}
			},
			status: "200", body: "hello from /tunnel",
			record: Record{Protocol: "connect", Host: "allowed.test", Port: o.port, Allowed: true},
		},
		{
			name: "https through CONNECT",
			args: func(p string) []string {
				return []string{"-k", "-x", "http://" + p, fmt.Sprintf("https://allowed.test:%d/tls", tlsOrigin.port)}
			},
			status: "200", body: "hello from /tls",
			record: Record{Protocol: "connect", Host: "allowed.test", Port: tlsOrigin.port, Allowed: true},
		},
		{
			name:   "https CONNECT denied",
			args:   func(p string) []string { return []string{"-k", "-x", "http://" + p, "https://denied.test/"} },
			status: "000", code: 56, stderr: "CONNECT tunnel failed, response 403",
			record: Record{Protocol: "connect", Host: "denied.test", Port: 443, Reason: "host not in allow-list"},
		},
		{
			name: "socks5-hostname allowed",
			args: func(p string) []string {
				return []string{"--socks5-hostname", p, fmt.Sprintf("http://allowed.test:%d/socks", o.port)}
			},
			status: "200", body: "hello from /socks",
			record: Record{Protocol: "socks5", Host: "allowed.test", Port: o.port, Allowed: true},
		},
		{
			name:   "socks5-hostname denied",
			args:   func(p string) []string { return []string{"--socks5-hostname", p, "http://denied.test/"} },
			status: "000", code: 97, stderr: "(2)", // connection not allowed by ruleset
			record: Record{Protocol: "socks5", Host: "denied.test", Port: 80, Reason: "host not in allow-list"},
		},
		{
			name:       "credential missing",
			credential: "s3cret",
			args: func(p string) []string {
				return []string{"-x", "http://" + p, fmt.Sprintf("http://allowed.test:%d/", o.port)}
			},
			status: "407", body: "authentication required",
		},
		{
			name:       "credential given",
			credential: "s3cret",
			args: func(p string) []string {
				return []string{"-x", "http://" + p, "-U", "moat:s3cret", fmt.Sprintf("http://allowed.test:%d/auth", o.port)}
			},
			status: "200", body: "hello from /auth",
			record: Record{Protocol: "http", Host: "allowed.test", Port: o.port, Allowed: true},
		},
		{
			name:       "socks5 credential given",
			credential: "s3cret",
			args: func(p string) []string {
				return []string{"-x", "socks5h://moat:s3cret@" + p, fmt.Sprintf("http://allowed.test:%d/sauth", o.port)}
			},
			status: "200", body: "hello from /sauth",
			record: Record{Protocol: "socks5", Host: "allowed.test", Port: o.port, Allowed: true},
		},
		{
			name:       "socks5 credential wrong",
			credential: "s3cret",
			args: func(p string) []string {
				return []string{"-x", "socks5h://moat:guess@" + p, fmt.Sprintf("http://allowed.test:%d/", o.port)}
			},
			status: "000", code: 97, stderr: "User was rejected",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			log := &auditLog{}
			_, addr := startProxy(t, Config{
				PolicyName: "allow-list",
				Check:      allowHosts("allowed.test"),
				Audit:      log.write,
				Resolver:   newResolver().set("allowed.test", "127.0.0.1").set("denied.test", "127.0.0.1"),
				AllowLocal: loopback,
				Credential: tc.credential,
			})
			status, body, code, errOut := runCurl(t, tc.args(addr)...)
			if status != tc.status || !strings.Contains(body, tc.body) || code != tc.code || !strings.Contains(errOut, tc.stderr) {
				t.Fatalf("status %s exit %d body %q stderr %q; want %s exit %d body %q stderr %q",
					status, code, body, errOut, tc.status, tc.code, tc.body, tc.stderr)
			}
			if tc.record.Host == "" {
				return
			}
			got := log.last(t)
			got.Time, got.IP = time.Time{}, ""
			want := tc.record
			if want.Allowed {
				want.Reason = "host in allow-list"
			}
			if got != want {
				t.Errorf("record %+v\nwant   %+v", got, want)
			}
		})
	}
}
