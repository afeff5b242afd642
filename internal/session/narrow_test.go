package session

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/policy"
)

// narrowPolicy is a policy with something of everything to narrow.
func narrowPolicy() policy.Result {
	var r policy.Result
	r.Network = policy.Network{Mode: policy.NetworkAllowList, AllowDomains: []string{"example.com", "*.pypi.org", "api.x.com:443"}}
	r.Grants = []moat.PathRequest{{Path: "/usr/share", Access: moat.READ}, {Path: "/var/tmp/data", Access: moat.READ | moat.WRITE}}
	r.Config.Limits = moat.Limits{MemoryBytes: 1 << 30, Processes: 100, Timeout: 10 * time.Second, FileSizeBytes: -1}
	r.Config.Isolation = moat.IsolationDefault
	r.Config.Build = true
	return r
}

func TestNarrow(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n       Narrowing
		code    string // "" for accepted
		setting string
		check   func(policy.Result) bool
	}{
		{"nothing", Narrowing{}, "", "", func(r policy.Result) bool {
			return len(r.Grants) == 2 && r.Network.Mode == policy.NetworkAllowList && r.Config.Build
		}},
		{"deny network", Narrowing{Network: "deny"}, "", "", func(r policy.Result) bool {
			return r.Network.Mode == policy.NetworkDeny && r.Network.AllowDomains == nil
		}},
		{"allow-list subset", Narrowing{Network: "allow-list", AllowDomains: []string{"Example.com."}}, "", "", func(r policy.Result) bool { return slices.Equal(r.Network.AllowDomains, []string{"example.com"}) }},
		{"under a wildcard", Narrowing{Network: "allow-list", AllowDomains: []string{"files.pypi.org"}}, "", "", nil},
		{"a port of an any-port host", Narrowing{Network: "allow-list", AllowDomains: []string{"example.com:8080"}}, "", "", nil},
		{"the port allowed", Narrowing{Network: "allow-list", AllowDomains: []string{"api.x.com:443"}}, "", "", nil},
		{"wildcard's own domain", Narrowing{Network: "allow-list", AllowDomains: []string{"pypi.org"}}, CodeWiden, "network", nil},
		{"another host", Narrowing{Network: "allow-list", AllowDomains: []string{"evil.com"}}, CodeWiden, "network", nil},
		{"any port of a one-port host", Narrowing{Network: "allow-list", AllowDomains: []string{"api.x.com"}}, CodeWiden, "network", nil},
		{"a wider wildcard", Narrowing{Network: "allow-list", AllowDomains: []string{"*.org"}}, CodeWiden, "network", nil},
		{"allow-all", Narrowing{Network: "allow-all"}, CodeBadRequest, "network", nil},
		{"host", Narrowing{Network: "host"}, CodeBadRequest, "network", nil},
		{"allow-list empty", Narrowing{Network: "allow-list"}, CodeBadRequest, "network", nil},
		{"domains without mode", Narrowing{AllowDomains: []string{"example.com"}}, CodeBadRequest, "network", nil},
		{"bad domain", Narrowing{Network: "allow-list", AllowDomains: []string{"exa mple"}}, CodeBadRequest, "network", nil},
		{"drop a grant", Narrowing{Grants: map[string]string{"/usr/share": "none"}}, "", "", func(r policy.Result) bool { return len(r.Grants) == 1 && r.Grants[0].Path == "/var/tmp/data" }},
		{"read-only of a writable grant", Narrowing{Grants: map[string]string{"/var/tmp/data/": "r"}}, "", "", func(r policy.Result) bool { return r.Grants[1].Access == moat.READ }},
		{"write of a read grant", Narrowing{Grants: map[string]string{"/usr/share": "rw"}}, CodeWiden, "grants", nil},
		{"exec of a writable grant", Narrowing{Grants: map[string]string{"/var/tmp/data": "rx"}}, CodeWiden, "grants", nil},
		{"a grant the policy lacks", Narrowing{Grants: map[string]string{"/home": "r"}}, CodeWiden, "grants", nil},
		{"a bad access", Narrowing{Grants: map[string]string{"/usr/share": "q"}}, CodeBadRequest, "grants", nil},
		{"write-only, which moat cannot enforce", Narrowing{Grants: map[string]string{"/var/tmp/data": "w"}}, CodeBadRequest, "grants", nil},
		{"exec-only, which moat cannot enforce", Narrowing{Grants: map[string]string{"/var/tmp/data": "x"}}, CodeBadRequest, "grants", nil},
		{"write and exec without read", Narrowing{Grants: map[string]string{"/var/tmp/data": "wx"}}, CodeBadRequest, "grants", nil},
		{"letters out of order", Narrowing{Grants: map[string]string{"/var/tmp/data": "wr"}}, CodeBadRequest, "grants", nil},
		{"upper case", Narrowing{Grants: map[string]string{"/var/tmp/data": "R"}}, CodeBadRequest, "grants", nil},
		{"NONE", Narrowing{Grants: map[string]string{"/var/tmp/data": "NONE"}}, CodeBadRequest, "grants", nil},
		{"the same access", Narrowing{Grants: map[string]string{"/var/tmp/data": "rw"}}, "", "", func(r policy.Result) bool { return r.Grants[1].Access == moat.READ|moat.WRITE }},
		{"a relative path", Narrowing{Grants: map[string]string{"var/tmp/data": "r"}}, CodeBadRequest, "grants", nil},
		{"a dot-relative path", Narrowing{Grants: map[string]string{"./data": "none"}}, CodeBadRequest, "grants", nil},
		{"an empty path", Narrowing{Grants: map[string]string{"": "none"}}, CodeBadRequest, "grants", nil},
		{"an empty access", Narrowing{Grants: map[string]string{"/usr/share": ""}}, CodeBadRequest, "grants", nil},
		{"less memory", Narrowing{Limits: NarrowLimits{MemoryBytes: 512 << 20}}, "", "", func(r policy.Result) bool { return r.Config.Limits.MemoryBytes == 512<<20 }},
		{"more memory", Narrowing{Limits: NarrowLimits{MemoryBytes: 2 << 30}}, CodeWiden, "limits.max-memory", nil},
		{"negative memory", Narrowing{Limits: NarrowLimits{MemoryBytes: -1}}, CodeBadRequest, "limits.max-memory", nil},
		{"more processes", Narrowing{Limits: NarrowLimits{Processes: 101}}, CodeWiden, "limits.max-processes", nil},
		{"fewer processes", Narrowing{Limits: NarrowLimits{Processes: 10}}, "", "", nil},
		{"shorter timeout", Narrowing{Limits: NarrowLimits{TimeoutMS: 5000}}, "", "", func(r policy.Result) bool { return r.Config.Limits.Timeout == 5*time.Second }},
		{"longer timeout", Narrowing{Limits: NarrowLimits{TimeoutMS: 20000}}, CodeWiden, "limits.timeout", nil},
		{"a cpu limit where none is", Narrowing{Limits: NarrowLimits{CPUSeconds: 10}}, "", "", func(r policy.Result) bool { return r.Config.Limits.CPUSeconds == 10 }},
		{"a file size where unlimited", Narrowing{Limits: NarrowLimits{FileSizeBytes: 1 << 40}}, "", "", nil},
		{"strict isolation", Narrowing{Isolation: "strict"}, "", "", func(r policy.Result) bool { return r.Config.Isolation == moat.IsolationStrict }},
		{"permissive isolation", Narrowing{Isolation: "permissive"}, CodeBadRequest, "isolation", nil},
		{"no build", Narrowing{NoBuild: true}, "", "", func(r policy.Result) bool { return !r.Config.Build }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := narrowPolicy()
			got, err := narrow(p, tc.n)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if tc.check != nil && !tc.check(got) {
					t.Errorf("narrowed to %+v", got)
				}
				if why := wider(narrowPolicy(), got); why != "" {
					t.Errorf("wider than the policy: %s", why)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Code != tc.code || e.Setting != tc.setting {
				t.Errorf("got %#v, want code %s setting %s", err, tc.code, tc.setting)
			}
		})
	}
	// The policy itself is never changed by a narrowing.
	p := narrowPolicy()
	narrow(p, Narrowing{Network: "deny", Grants: map[string]string{"/usr/share": "none", "/var/tmp/data": "r"}})
	if len(p.Grants) != 2 || p.Grants[1].Access != moat.READ|moat.WRITE || p.Network.Mode != policy.NetworkAllowList {
		t.Errorf("narrow changed the policy: %+v", p)
	}
}

// TestNarrowFromStricter checks what a strict policy with no network
// refuses: any network at all, and looser isolation.
func TestNarrowFromStricter(t *testing.T) {
	var p policy.Result // deny, strict, no grants
	for _, n := range []Narrowing{
		{Network: "allow-list", AllowDomains: []string{"example.com"}},
		{Isolation: "default"},
		{Grants: map[string]string{"/usr": "r"}},
	} {
		var e *Error
		if _, err := narrow(p, n); !errors.As(err, &e) || e.Code != CodeWiden {
			t.Errorf("%+v: got %v, want widen_refused", n, err)
		}
	}
	// The control: the same directions, narrowing, are accepted.
	if _, err := narrow(p, Narrowing{Network: "deny", Isolation: "strict"}); err != nil {
		t.Errorf("control: %v", err)
	}
}

// rank orders network modes by what they allow.
func rank(mode string) int {
	return map[string]int{"": 0, policy.NetworkDeny: 0, policy.NetworkAllowList: 1, policy.NetworkAllowAll: 2, policy.NetworkHost: 3}[mode]
}

// wider says how got allows more than p, or "" when it does not.
func wider(p, got policy.Result) string {
	if rank(got.Network.Mode) > rank(p.Network.Mode) {
		return "network mode " + got.Network.Mode
	}
	if got.Network.Mode == policy.NetworkAllowList && p.Network.Mode == policy.NetworkAllowList {
		for _, d := range got.Network.AllowDomains {
			if !slices.ContainsFunc(p.Network.AllowDomains, func(pd string) bool { return domainCovers(pd, d) }) {
				return "domain " + d
			}
		}
	}
	if !slices.Equal(got.Network.AllowLocal, p.Network.AllowLocal) && len(got.Network.AllowLocal) > len(p.Network.AllowLocal) {
		return "allow-local"
	}
	for _, g := range got.Grants {
		i := slices.IndexFunc(p.Grants, func(pg moat.PathRequest) bool { return pg.Path == g.Path })
		if i < 0 {
			return "grant " + g.Path
		}
		if g.Access&^(p.Grants[i].Access|moat.READ) != 0 {
			return "access of " + g.Path
		}
	}
	lim := func(have, want int64, def int64) bool { // want is within have
		if have == 0 {
			have = def
		}
		if want == 0 {
			want = def
		}
		return have <= 0 || (want > 0 && want <= have)
	}
	pl, gl := p.Config.Limits, got.Config.Limits
	if !lim(pl.MemoryBytes, gl.MemoryBytes, 1<<62) || !lim(pl.Processes, gl.Processes, moat.DefaultProcesses) ||
		!lim(pl.FileSizeBytes, gl.FileSizeBytes, moat.DefaultFileSizeBytes) || !lim(pl.CPUSeconds, gl.CPUSeconds, -1) ||
		!lim(int64(pl.Timeout), int64(gl.Timeout), -1) || !lim(pl.DiskBytes, gl.DiskBytes, 1<<62) {
		return "a limit"
	}
	if got.Config.Isolation > p.Config.Isolation {
		return "isolation"
	}
	if got.Config.Build && !p.Config.Build {
		return "build"
	}
	if got.WorkDir != p.WorkDir || got.Home != p.Home || !slices.Equal(got.Sockets, p.Sockets) || got.Config.Security != p.Config.Security {
		return "a setting a client cannot touch"
	}
	return ""
}

// FuzzNarrow narrows random requests and checks that whatever is accepted
// is never wider than the policy.
func FuzzNarrow(f *testing.F) {
	f.Add("allow-list", "files.pypi.org", "/usr/share", "r", int64(1<<20), int64(5), int64(0), "strict", true, false)
	f.Add("deny", "", "/var/tmp/data", "rwx", int64(-1), int64(1000), int64(99999), "default", false, true)
	f.Add("", "*.org", "/home", "none", int64(2<<30), int64(0), int64(1), "permissive", false, false)
	f.Fuzz(func(t *testing.T, network, domain, grant, access string, mem, procs, timeout int64, iso string, noBuild, strictPolicy bool) {
		p := narrowPolicy()
		if strictPolicy {
			p = policy.Result{}
			p.Config.Limits.Processes = 10
		}
		n := Narrowing{Network: network, Isolation: iso, NoBuild: noBuild,
			Limits: NarrowLimits{MemoryBytes: mem, Processes: procs, TimeoutMS: timeout, FileSizeBytes: mem, CPUSeconds: procs}}
		if domain != "" {
			n.AllowDomains = []string{domain}
		}
		if grant != "" {
			n.Grants = map[string]string{grant: access}
		}
		got, err := narrow(p, n)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || (e.Code != CodeWiden && e.Code != CodeBadRequest) || e.Message == "" {
				t.Fatalf("error %#v is not a widen_refused or bad_request *Error", err)
			}
			return
		}
		orig := narrowPolicy()
		if strictPolicy {
			orig = policy.Result{}
			orig.Config.Limits.Processes = 10
		}
		if why := wider(orig, got); why != "" {
			t.Fatalf("%+v narrowed %+v to something wider: %s", n, orig, why)
		}
		if grant != "" && (!filepath.IsAbs(grant) || !slices.Contains([]string{"none", "r", "rw", "rx", "rwx"}, access)) {
			t.Fatalf("grant %q access %q accepted: want an absolute path and an access moat enforces as written", grant, access)
		}
	})
}

// TestNarrowedGrantSummary: a session's Summary says what its narrowed
// grants allow: a writable grant narrowed to "r" is listed readable, not
// writable, and a dropped grant is not listed at all.
func TestNarrowedGrantSummary(t *testing.T) {
	p := narrowPolicy()
	before := summarize(p, "/w")
	if !slices.Contains(before.Writable, "/var/tmp/data") || !slices.Contains(before.Readable, "/usr/share") {
		t.Fatalf("control: the policy's own summary is %+v", before)
	}
	got, err := narrow(p, Narrowing{Grants: map[string]string{"/var/tmp/data": "r", "/usr/share": "none"}})
	if err != nil {
		t.Fatal(err)
	}
	s := summarize(got, "/w")
	if !slices.Equal(s.Writable, []string{"/w"}) || !slices.Equal(s.Readable, []string{"/var/tmp/data"}) {
		t.Errorf("narrowed summary: writable %q readable %q, want [/w] and [/var/tmp/data]", s.Writable, s.Readable)
	}
}

// TestNarrowGrantErrorsName: a refused grant names the key, the accepted
// values, and for a relative or unknown path the policy's grant paths.
func TestNarrowGrantErrorsName(t *testing.T) {
	for _, tc := range []struct {
		grants map[string]string
		want   []string
	}{
		{map[string]string{"/var/tmp/data": "w"}, []string{`"/var/tmp/data"`, `"w"`, `"none", "r", "rw", "rx", "rwx"`}},
		{map[string]string{"data": "r"}, []string{`"data"`, "absolute", `"/usr/share", "/var/tmp/data"`}},
		{map[string]string{"/home": "r"}, []string{`"/home"`, `"/usr/share", "/var/tmp/data"`}},
	} {
		_, err := narrow(narrowPolicy(), Narrowing{Grants: tc.grants})
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("%v: got %v, want an *Error", tc.grants, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(e.Message, w) {
				t.Errorf("%v: message %q lacks %s", tc.grants, e.Message, w)
			}
		}
	}
}
