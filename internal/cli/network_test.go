package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/policy"
)

func TestNetworkConfig(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name       string
		in         policy.Network
		wantPolicy string // "", "allow-all", "allow-list", "audited"
		wantLocal  int
		wantErr    string
	}{
		{name: "deny runs no proxy", in: policy.Network{Mode: "deny"}},
		{name: "unset is deny", in: policy.Network{}},
		{name: "allow-all", in: policy.Network{Mode: "allow-all"}, wantPolicy: "allow-all"},
		{name: "allow-list", in: policy.Network{Mode: "allow-list", AllowDomains: []string{"*.example.com", "pypi.org:443"}}, wantPolicy: "allow-list"},
		{name: "local ranges", in: policy.Network{Mode: "allow-all", AllowLocal: []string{"127.0.0.1/32", "fd00::/8"}}, wantPolicy: "allow-all", wantLocal: 2},
		{name: "audit log", in: policy.Network{Mode: "allow-all", AuditLog: filepath.Join(dir, "a.jsonl")}, wantPolicy: "audited"},
		{name: "daily audit log", in: policy.Network{Mode: "allow-all", AuditLog: dir, AuditRotate: "daily"}, wantPolicy: "audited"},
		{name: "audit log in a missing directory", in: policy.Network{Mode: "allow-all", AuditLog: filepath.Join(dir, "no", "a.jsonl")}, wantErr: "--audit-log"},
		{name: "bad pattern", in: policy.Network{Mode: "allow-list", AllowDomains: []string{"a*b"}}, wantErr: "--allow-domain"},
		{name: "bad local range", in: policy.Network{Mode: "allow-all", AllowLocal: []string{"10.0.0.1/99"}}, wantErr: "--allow-local"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cfg moat.Config
			log, err := networkConfig(tt.in, &cfg)
			if tt.wantErr != "" {
				if code, _ := exitCode(err); err == nil || !strings.Contains(err.Error(), tt.wantErr) || code != 2 {
					t.Fatalf("err = %v (exit %d), want a usage error about %s", err, code, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if log != nil {
					log.Close()
				}
			}()
			var got string
			switch p := cfg.Network.(type) {
			case nil:
			case *moat.AuditedPolicy:
				got = "audited"
			case *moat.AllowListPolicy:
				got = "allow-list"
			default:
				if p == moat.AllowAll() {
					got = "allow-all"
				}
			}
			if got != tt.wantPolicy || len(cfg.AllowLocal) != tt.wantLocal {
				t.Errorf("policy %q with %d local ranges, want %q with %d", got, len(cfg.AllowLocal), tt.wantPolicy, tt.wantLocal)
			}
			if (log != nil) != (tt.wantPolicy == "audited") {
				t.Errorf("audit log %v", log)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "no")); err == nil {
		t.Error("a missing audit directory was created")
	}
}
