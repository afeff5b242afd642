package moat

import (
	"context"
	"net"
	"net/netip"
	"testing"

	"github.com/moat-sandbox/moat/ipc"
)

func mustAllowList(t *testing.T, pats ...string) NetworkPolicy {
	t.Helper()
	p, err := AllowList(pats...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCacheDigest: every setting that changes what a run may reach or
// hold changes the digest, so no two such policies share a cache store;
// what only bounds a run does not.
func TestCacheDigest(t *testing.T) {
	t.Setenv("MOAT_TEST_PASS", "one")
	base := Config{WorkDir: "/w", KeepCaches: true}
	router := ipc.NewRouter()
	if err := ipc.Register(router, "hello", func(context.Context, struct{}, ipc.Call) (int, error) { return 0, nil }); err != nil {
		t.Fatal(err)
	}
	differ := []struct {
		name string
		edit func(c *Config)
	}{
		{"isolation", func(c *Config) { c.Isolation = IsolationPermissive }},
		{"a protection lifted", func(c *Config) { s := c.Isolation.Security(); s.ProtectCredentials = false; c.Security = &s }},
		{"best effort", func(c *Config) { c.Enforcement = BestEffort }},
		{"network allow all", func(c *Config) { c.Network = AllowAll() }},
		{"an allowed domain", func(c *Config) { c.Network = mustAllowList(t, "example.com") }},
		{"another allowed domain", func(c *Config) { c.Network = mustAllowList(t, "example.org") }},
		{"a local destination", func(c *Config) { c.AllowLocal = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")} }},
		{"a grant", func(c *Config) { c.Grants = []Grant{{Path: "/data", Access: READ}} }},
		{"a grant's access", func(c *Config) { c.Grants = []Grant{{Path: "/data", Access: READ | WRITE}} }},
		{"a socket", func(c *Config) { c.Sockets = []string{"/run/s.sock"} }},
		{"a variable set", func(c *Config) { c.Env.Set = []string{"TOKEN=x"} }},
		{"its value", func(c *Config) { c.Env.Set = []string{"TOKEN=y"} }},
		{"a passed variable", func(c *Config) { c.Env.Passthrough = []string{"MOAT_TEST_PASS"} }},
		{"build mode", func(c *Config) { c.Build = true }},
		{"python", func(c *Config) { c.Python = &PythonConfig{Venv: "/venv"} }},
		{"pip install", func(c *Config) { c.Python = &PythonConfig{Venv: "/venv", AllowPipInstall: true} }},
		{"an IPC command", func(c *Config) { c.IPC = router }},
		{"a denied path", func(c *Config) { c.Deny = []string{"/w/secret"} }},
		{"a read-only path", func(c *Config) { c.ReadOnly = []string{"/w/ro"} }},
		{"a sealed path", func(c *Config) { c.Seal = []string{"/w/s"} }},
		{"a virtual file", func(c *Config) { c.VirtualFiles = map[string]string{"/etc/x": "a"} }},
		{"hidden /proc", func(c *Config) { c.HideProc = true }},
	}
	same := []struct {
		name string
		edit func(c *Config)
	}{
		{"limits", func(c *Config) { c.Limits.MemoryBytes = 1 << 30; c.Limits.Timeout = 5 }},
		{"nice and io priority", func(c *Config) { c.Nice = 5; c.IOPriority = IOPriorityBackground }},
		{"deny all spelled out", func(c *Config) { c.Network = DenyAll() }},
		{"an audit log", func(c *Config) { c.Network = Audited(nil, &NetworkAuditLog{}) }},
	}
	want, err := cacheDigest(&base)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{want: "base"}
	for _, c := range differ {
		cfg := base
		c.edit(&cfg)
		got, err := cacheDigest(&cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if prev, ok := seen[got]; ok {
			t.Errorf("%s: same digest as %s", c.name, prev)
		}
		seen[got] = c.name
	}
	t.Setenv("MOAT_TEST_PASS", "two")
	passed := base
	passed.Env.Passthrough = []string{"MOAT_TEST_PASS"}
	if got, _ := cacheDigest(&passed); seen[got] != "" {
		t.Errorf("a passed variable's new host value shares the digest of %s", seen[got])
	}
	for _, c := range same {
		cfg := base
		c.edit(&cfg)
		if got, err := cacheDigest(&cfg); err != nil || got != want {
			t.Errorf("%s changed the digest (%v)", c.name, err)
		}
	}
	a, b := base, base
	a.Network, b.Network = mustAllowList(t, "a.example", "b.example"), mustAllowList(t, "b.example", "a.example")
	if da, _ := cacheDigest(&a); func() string { db, _ := cacheDigest(&b); return db }() != da {
		t.Error("the order of allowed domains changed the digest")
	}
	for name, cfg := range map[string]Config{
		"a custom network policy": {Network: Custom(func(context.Context, NetworkRequest) (bool, string) { return true, "" })},
		"a custom resolver":       {Resolver: net.DefaultResolver},
	} {
		if _, err := cacheDigest(&cfg); err == nil {
			t.Errorf("%s: digested, though it cannot be told apart from another", name)
		}
	}
}

func TestValidateKeepCaches(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"with a working directory", Config{KeepCaches: true, WorkDir: "/w"}, true},
		{"without one", Config{KeepCaches: true}, false},
		{"with a kept home", Config{KeepCaches: true, WorkDir: "/w", Home: "/h"}, false},
	} {
		if err := c.cfg.Validate(); (err == nil) != c.ok {
			t.Errorf("%s: Validate = %v", c.name, err)
		}
	}
}
