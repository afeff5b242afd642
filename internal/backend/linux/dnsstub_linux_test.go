package linux

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	"golang.org/x/sys/unix"
)

// dnsQuery builds a query message.
func dnsQuery(t testing.TB, id uint16, op dnsmessage.OpCode, name string, typ dnsmessage.Type) []byte {
	t.Helper()
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: id, OpCode: op, RecursionDesired: true})
	if name != "" {
		if err := b.StartQuestions(); err != nil {
			t.Fatal(err)
		}
		n, err := dnsmessage.NewName(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Question(dnsmessage.Question{Name: n, Type: typ, Class: dnsmessage.ClassINET}); err != nil {
			t.Fatal(err)
		}
	}
	msg, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

func TestAnswerDNS(t *testing.T) {
	response := func() []byte {
		b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 7, Response: true})
		m, _ := b.Finish()
		return m
	}()
	tests := []struct {
		name      string
		msg       []byte
		wantOK    bool
		wantRCode dnsmessage.RCode
		wantName  string
	}{
		{"A query", dnsQuery(t, 1, 0, "pypi.org.", dnsmessage.TypeA), true, dnsmessage.RCodeNameError, "pypi.org"},
		{"AAAA, upper case", dnsQuery(t, 2, 0, "PyPI.ORG.", dnsmessage.TypeAAAA), true, dnsmessage.RCodeNameError, "pypi.org"},
		{"SRV", dnsQuery(t, 3, 0, "_http._tcp.example.com.", dnsmessage.TypeSRV), true, dnsmessage.RCodeNameError, "_http._tcp.example.com"},
		{"reverse lookup not reported", dnsQuery(t, 4, 0, "1.0.0.127.in-addr.arpa.", dnsmessage.TypePTR), true, dnsmessage.RCodeNameError, ""},
		{"root name", dnsQuery(t, 5, 0, ".", dnsmessage.TypeNS), true, dnsmessage.RCodeNameError, ""},
		{"terminal controls escaped", dnsQuery(t, 6, 0, "a\x1b[31m.example.", dnsmessage.TypeA), true, dnsmessage.RCodeNameError, `a\027\09131m.example`},
		{"status opcode", dnsQuery(t, 7, 2, "example.com.", dnsmessage.TypeA), true, dnsmessage.RCodeNotImplemented, ""},
		{"no question", dnsQuery(t, 8, 0, "", 0), true, dnsmessage.RCodeFormatError, ""},
		{"a response is not answered", response, false, 0, ""},
		{"short", []byte{0, 1, 2}, false, 0, ""},
		{"empty", nil, false, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, name, ok := answerDNS(tt.msg)
			if ok != tt.wantOK || name != tt.wantName {
				t.Fatalf("answerDNS = name %q, ok %v; want %q, %v", name, ok, tt.wantName, tt.wantOK)
			}
			if !ok {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(resp)
			if err != nil {
				t.Fatalf("answer does not parse: %v", err)
			}
			var qh dnsmessage.Parser
			want, _ := qh.Start(tt.msg)
			if !h.Response || h.ID != want.ID || h.RCode != tt.wantRCode {
				t.Errorf("answer header %+v; want a response to ID %d with %v", h, want.ID, tt.wantRCode)
			}
			if answers, _ := (func() ([]dnsmessage.Resource, error) { _ = p.SkipAllQuestions(); return p.AllAnswers() })(); len(answers) != 0 {
				t.Errorf("answer has %d records, want none", len(answers))
			}
		})
	}
}

func FuzzAnswerDNS(f *testing.F) {
	f.Add(dnsQuery(f, 1, 0, "pypi.org.", dnsmessage.TypeA))
	f.Add(dnsQuery(f, 2, 0, "_x.a-b.example.", dnsmessage.TypeTXT))
	f.Add(dnsQuery(f, 3, 4, "x.", dnsmessage.TypeA))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, msg []byte) {
		resp, name, ok := answerDNS(msg)
		if !ok {
			if resp != nil || name != "" {
				t.Fatalf("refused message gave %q, %q", resp, name)
			}
			return
		}
		var p dnsmessage.Parser
		h, err := p.Start(resp)
		if err != nil || !h.Response {
			t.Fatalf("answer %x does not parse as a response: %v", resp, err)
		}
		for i := 0; i < len(name); i++ {
			c := name[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '\\') {
				t.Fatalf("name %q holds byte %#x", name, c)
			}
		}
		if len(name) > 4*dnsMaxNameBytes {
			t.Fatalf("name of %d bytes", len(name))
		}
	})
}

// TestDNSStubServesGoResolver runs the stub on a host loopback listener and
// asks it through Go's own resolver over TCP, as a sandbox's "options
// use-vc" does: the lookup fails at once as not found, and the stub reports
// the name.
func TestDNSStubServesGoResolver(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var mu sync.Mutex
	var names []string
	go serveDNSStub(ln, func(n string) { mu.Lock(); names = append(names, n); mu.Unlock() })
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", ln.Addr().String())
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err = r.LookupHost(ctx, "Example.Invalid")
	var de *net.DNSError
	if !errors.As(err, &de) || !de.IsNotFound {
		t.Fatalf("lookup: %v, want not found", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("lookup took %v", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(names) == 0 || strings.Join(names, ",") != strings.Repeat("example.invalid,", len(names))[:len(names)*len("example.invalid,")-1] {
		t.Errorf("stub reported %q, want example.invalid", names)
	}
}

// TestPlaceResolvConf places the stub's resolv.conf over each form the
// host's can take, in a mount namespace of a thread of its own: a file, a
// link (absolute or relative, dangling in the sandbox) that must not be
// followed, and none. The new root must still become read-only afterwards.
func TestPlaceResolvConf(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a mount namespace of one thread (the escape battery covers the unprivileged path)")
	}
	tests := []struct {
		name  string
		setup func(etc string) error
		want  string // the sandbox's resolv.conf; "" means none
	}{
		{"file", func(etc string) error {
			return os.WriteFile(etc+"/resolv.conf", []byte("nameserver 192.0.2.53\n"), 0o644)
		}, sandboxResolvConf},
		{"absolute link", func(etc string) error { return os.Symlink("/nonexistent-moat/stub-resolv.conf", etc+"/resolv.conf") }, sandboxResolvConf},
		{"relative link", func(etc string) error {
			return os.Symlink("../run/systemd/resolve/stub-resolv.conf", etc+"/resolv.conf")
		}, sandboxResolvConf},
		{"none", func(string) error { return nil }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			errc := make(chan error, 1)
			go func() {
				runtime.LockOSThread() // never unlocked: the thread ends with its mount namespace
				errc <- func() error {
					if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_FS); err != nil {
						return err
					}
					if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
						return err
					}
					if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "mode=0755"); err != nil {
						return err
					}
					if err := os.Mkdir(dir+"/etc", 0o755); err != nil {
						return err
					}
					if err := tt.setup(dir + "/etc"); err != nil {
						return err
					}
					if err := placeResolvConf(dir); err != nil {
						return err
					}
					got, err := os.ReadFile(dir + "/etc/resolv.conf")
					switch {
					case tt.want == "" && !errors.Is(err, os.ErrNotExist):
						return fmt.Errorf("resolv.conf %q, %v; want none", got, err)
					case tt.want != "" && (err != nil || string(got) != tt.want):
						return fmt.Errorf("resolv.conf %q, %v; want the stub's", got, err)
					}
					if _, err := os.Lstat("/nonexistent-moat"); err == nil {
						return fmt.Errorf("the host path a link names was created")
					}
					if _, err := os.Lstat(dir + "/.moat-resolv"); err == nil {
						return fmt.Errorf("the staging directory is left in the root")
					}
					if tt.want != "" {
						if err := os.WriteFile(dir+"/etc/resolv.conf", []byte("x"), 0o644); err == nil {
							return fmt.Errorf("the sandbox's resolv.conf is writable")
						}
					}
					// What the zygote does next: the root becomes read-only.
					return unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_RDONLY, "")
				}()
			}()
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
		})
	}
}
