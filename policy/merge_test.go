package policy

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

// flagNames is a stand-in for the CLI's spelling of keys as flags.
type flagNames struct{}

func (flagNames) Key(key string) string {
	if key == "allow-domains" {
		return "--allow-domain"
	}
	return "--" + key[strings.LastIndexByte(key, '.')+1:]
}
func (flagNames) At(string) string { return "" }

// parseLayer parses doc as the file x.toml, failing the test on error.
func parseLayer(t *testing.T, doc string) Layer {
	t.Helper()
	f, err := Parse("/cfg/x.toml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return f.Layer
}

func TestMerge(t *testing.T) {
	rwx := moat.READ | moat.WRITE | moat.EXEC
	strict, def, permissive := moat.IsolationStrict.Security(), moat.IsolationDefault.Security(), moat.IsolationPermissive.Security()
	tests := []struct {
		name  string
		file  string // a config file, or ""
		flags Layer  // the command line
		check func(t *testing.T, r Result)
	}{
		{
			name: "nothing is the library default: strict, its preset, no network",
			check: func(t *testing.T, r Result) {
				want := moat.Config{Isolation: moat.IsolationStrict, Security: &strict}
				if !reflect.DeepEqual(r.Config, want) {
					t.Errorf("config %+v, want %+v", r.Config, want)
				}
				if r.Network.Mode != NetworkDeny || r.WorkDir != "" || r.Grants != nil {
					t.Errorf("result %+v", r)
				}
			},
		},
		{
			name:  "isolation from the command line",
			flags: Layer{Isolation: ptr(moat.IsolationPermissive)},
			check: func(t *testing.T, r Result) {
				if r.Config.Isolation != moat.IsolationPermissive || *r.Config.Security != permissive {
					t.Errorf("isolation %v, security %+v", r.Config.Isolation, *r.Config.Security)
				}
			},
		},
		{
			name: "isolation from the file",
			file: "isolation = \"default\"\n",
			check: func(t *testing.T, r Result) {
				if r.Config.Isolation != moat.IsolationDefault || *r.Config.Security != def {
					t.Errorf("isolation %v, security %+v", r.Config.Isolation, *r.Config.Security)
				}
			},
		},
		{
			name:  "command-line isolation beats the file's",
			file:  "isolation = \"permissive\"\n",
			flags: Layer{Isolation: ptr(moat.IsolationStrict)},
			check: func(t *testing.T, r Result) {
				if r.Config.Isolation != moat.IsolationStrict || *r.Config.Security != strict {
					t.Errorf("isolation %v, security %+v", r.Config.Isolation, *r.Config.Security)
				}
			},
		},
		{
			name: "security layering: preset, then file, then command line",
			file: "isolation = \"permissive\"\n[security]\nprotect-credentials = false\nallow-gpu = true\nprotect-keychains = false\n",
			flags: Layer{Security: moat.SecurityOverrides{
				ProtectUserHome: ptr(true), ProtectKeychains: ptr(true), AllowGPU: ptr(false),
			}},
			check: func(t *testing.T, r Result) {
				want := moat.SecurityConfig{
					ProtectUserHome:    true,  // preset false, flag true
					ProtectCredentials: false, // preset true, file false
					// preset: split out of ProtectCredentials, so the
					// file's false leaves them on
					ProtectShellHistory:       true,
					ProtectPackageCredentials: true,
					ProtectCloudConfig:        true,  // preset
					ProtectBrowserData:        true,  // preset
					ProtectKeychains:          true,  // file false, flag true
					AllowGPU:                  false, // file true, flag false
				}
				if *r.Config.Security != want {
					t.Errorf("security %+v, want %+v", *r.Config.Security, want)
				}
			},
		},
		{
			name:  "a file's switch overrides the preset of a later isolation level",
			file:  "[security]\nprotect-user-home = false\n",
			flags: Layer{Isolation: ptr(moat.IsolationStrict)},
			check: func(t *testing.T, r Result) {
				if r.Config.Security.ProtectUserHome {
					t.Error("ProtectUserHome: the file's false was lost")
				}
			},
		},
		{
			name:  "scalars: the command line beats the file",
			file:  "network = \"allow-all\"\naudit-log = \"file.jsonl\"\n[limits]\nmax-memory = \"1G\"\nmax-processes = 64\ntimeout = \"1m\"\nnice = 5\n[workdir]\npath = \"/srv/job\"\n",
			flags: Layer{Network: NetworkAllowAll, AuditLog: "flag.jsonl", WorkDir: "job", Limits: Limits{MemoryBytes: ptr[int64](0), Nice: ptr(10)}},
			check: func(t *testing.T, r Result) {
				if r.Network.AuditLog != "flag.jsonl" || r.WorkDir != "job" {
					t.Errorf("audit log %q, workdir %q", r.Network.AuditLog, r.WorkDir)
				}
				want := moat.Limits{MemoryBytes: 0, Processes: 64, Timeout: time.Minute}
				if r.Config.Limits != want || r.Config.Nice != 10 {
					t.Errorf("limits %+v nice %d, want %+v nice 10", r.Config.Limits, r.Config.Nice, want)
				}
			},
		},
		{
			name: "where the audit log comes from: the file, relative to it",
			file: "network = \"allow-all\"\naudit-log = \"net.jsonl\"\naudit-rotate = \"daily\"\n",
			check: func(t *testing.T, r Result) {
				want := Network{Mode: NetworkAllowAll, AuditLog: "/cfg/net.jsonl", AuditRotate: RotateDaily}
				if !reflect.DeepEqual(r.Network, want) {
					t.Errorf("network %+v, want %+v", r.Network, want)
				}
			},
		},
		{
			name:  "audit log from the command line with the file's network",
			file:  "network = \"allow-list\"\nallow-domains = [\"example.com\"]\n",
			flags: Layer{AuditLog: "run.jsonl"},
			check: func(t *testing.T, r Result) {
				if r.Network.AuditLog != "run.jsonl" || r.Network.Mode != NetworkAllowList {
					t.Errorf("network %+v", r.Network)
				}
			},
		},
		{
			name:  "lists concatenate, file entries first",
			file:  "network = \"allow-list\"\nallow-domains = [\"a.example\", \"b.example\"]\nallow-local = [\"10.0.0.0/8\"]\n[env]\npassthrough = [\"TERM\"]\nset = { A = \"file\" }\n",
			flags: Layer{AllowDomains: []string{"c.example"}, AllowLocal: []string{"127.0.0.1/32"}, Env: []EnvVar{{Name: "LANG"}}},
			check: func(t *testing.T, r Result) {
				if want := []string{"a.example", "b.example", "c.example"}; !reflect.DeepEqual(r.Network.AllowDomains, want) {
					t.Errorf("domains %v, want %v", r.Network.AllowDomains, want)
				}
				if want := []string{"10.0.0.0/8", "127.0.0.1/32"}; !reflect.DeepEqual(r.Network.AllowLocal, want) {
					t.Errorf("local %v, want %v", r.Network.AllowLocal, want)
				}
				want := moat.Env{Passthrough: []string{"TERM", "LANG"}, Set: []string{"A=file"}}
				if !reflect.DeepEqual(r.Config.Env, want) {
					t.Errorf("env %+v, want %+v", r.Config.Env, want)
				}
			},
		},
		{
			name:  "a variable named twice: the command line wins",
			file:  "[env]\nset = { A = \"file\", B = \"file\" }\n",
			flags: Layer{Env: []EnvVar{{Name: "A"}, {Name: "B", Value: "flag", Set: true}}},
			check: func(t *testing.T, r Result) {
				want := moat.Env{Passthrough: []string{"A"}, Set: []string{"B=flag"}}
				if !reflect.DeepEqual(r.Config.Env, want) {
					t.Errorf("env %+v, want %+v", r.Config.Env, want)
				}
			},
		},
		{
			name:  "file and command-line grants are unioned per path",
			file:  "[grants]\n\"/srv/data\" = \"rw\"\n\"/usr/share\" = \"r\"\n",
			flags: Layer{Grants: []moat.PathRequest{{Path: "/srv/data/", Access: moat.EXEC}, {Path: "/opt", Access: moat.READ}}},
			check: func(t *testing.T, r Result) {
				want := []moat.PathRequest{{Path: "/srv/data", Access: rwx}, {Path: "/usr/share", Access: moat.READ}, {Path: "/opt", Access: moat.READ}}
				if !reflect.DeepEqual(r.Grants, want) {
					t.Errorf("grants %v, want %v", r.Grants, want)
				}
			},
		},
		{
			name:  "sugar: writable and executable of one path is rwx",
			flags: Layer{Grants: []moat.PathRequest{{Path: "p", Access: moat.WRITE}, {Path: "p", Access: moat.EXEC}}},
			check: func(t *testing.T, r Result) {
				if want := []moat.PathRequest{{Path: "p", Access: rwx}}; !reflect.DeepEqual(r.Grants, want) {
					t.Errorf("grants %v, want %v", r.Grants, want)
				}
			},
		},
		{
			name:  "the file's domains are dropped when the command line picks allow-all",
			file:  "network = \"allow-list\"\nallow-domains = [\"a.example\"]\n",
			flags: Layer{Network: NetworkAllowAll},
			check: func(t *testing.T, r Result) {
				if r.Network.Mode != NetworkAllowAll || r.Network.AllowDomains != nil {
					t.Errorf("network %+v", r.Network)
				}
			},
		},
		{
			name:  "the file's domains and ranges are dropped under the command line's deny",
			file:  "network = \"allow-list\"\nallow-domains = [\"a.example\"]\nallow-local = [\"10.0.0.1\"]\n",
			flags: Layer{Network: NetworkDeny},
			check: func(t *testing.T, r Result) {
				if !reflect.DeepEqual(r.Network, Network{Mode: NetworkDeny}) {
					t.Errorf("network %+v", r.Network)
				}
			},
		},
		{
			name:  "explicit deny from the command line over the file's allow-all",
			file:  "network = \"allow-all\"\n",
			flags: Layer{Network: NetworkDeny},
			check: func(t *testing.T, r Result) {
				if r.Network.Mode != NetworkDeny {
					t.Errorf("mode %q", r.Network.Mode)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var layers []Layer
			if tt.file != "" {
				layers = append(layers, parseLayer(t, tt.file))
			}
			tt.flags.Source = flagNames{}
			r, err := Merge(append(layers, tt.flags)...)
			if err != nil {
				t.Fatalf("Merge: %v", err)
			}
			tt.check(t, r)
		})
	}
}

func TestMergeErrors(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		flags Layer
		want  string
	}{
		{name: "allow-list with no domains on the command line", flags: Layer{Network: NetworkAllowList},
			want: `--network "allow-list": no domain to allow; add --allow-domain`},
		{name: "allow-list with no domains in the file", file: "\nnetwork = \"allow-list\"\n",
			want: `config "/cfg/x.toml": line 2: network "allow-list": no domain to allow; add allow-domains`},
		{name: "allow-list from the command line, domains nowhere", file: "network = \"allow-all\"\n", flags: Layer{Network: NetworkAllowList},
			want: `--network "allow-list": no domain to allow; add --allow-domain`},
		{name: "audit log with network unset", flags: Layer{AuditLog: "a.jsonl"},
			want: `--audit-log "a.jsonl": needs --network allow-all or allow-list; with no network no proxy runs and there is nothing to record`},
		{name: "audit log with deny", flags: Layer{Network: NetworkDeny, AuditLog: "a.jsonl"},
			want: `--audit-log "a.jsonl": needs --network allow-all or allow-list; with no network no proxy runs and there is nothing to record`},
		{name: "file's audit log under the command line's deny", file: "network = \"allow-all\"\n\naudit-log = \"/a.jsonl\"\n", flags: Layer{Network: NetworkDeny},
			want: `config "/cfg/x.toml": line 3: audit-log "/a.jsonl": needs network allow-all or allow-list; with no network no proxy runs and there is nothing to record`},
		{name: "audit log in a file that denies", file: "network = \"deny\"\naudit-log = \"/a.jsonl\"\n",
			want: `config "/cfg/x.toml": line 2: audit-log "/a.jsonl": needs network allow-all or allow-list; with no network no proxy runs and there is nothing to record`},
		{name: "rotation without an audit log", flags: Layer{Network: NetworkAllowAll, AuditRotate: RotateDaily},
			want: `--audit-rotate "daily": needs --audit-log`},
		{name: "domains without allow-list", flags: Layer{AllowDomains: []string{"a.example"}},
			want: `--allow-domain "a.example": needs --network allow-list`},
		{name: "domains with the same layer's allow-all", file: "network = \"allow-all\"\nallow-domains = [\"a.example\"]\n",
			want: `config "/cfg/x.toml": line 2: allow-domains "a.example": needs network allow-list`},
		{name: "command-line domains under the file's allow-all", file: "network = \"allow-all\"\n", flags: Layer{AllowDomains: []string{"a.example"}},
			want: `--allow-domain "a.example": needs --network allow-list`},
		{name: "local ranges under deny", flags: Layer{AllowLocal: []string{"10.0.0.0/8"}},
			want: `--allow-local "10.0.0.0/8": needs --network allow-all or allow-list`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var layers []Layer
			if tt.file != "" {
				layers = append(layers, parseLayer(t, tt.file))
			}
			tt.flags.Source = flagNames{}
			_, err := Merge(append(layers, tt.flags)...)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error\n%v\nwant\n%s", err, tt.want)
			}
		})
	}
}

func TestResultDescribe(t *testing.T) {
	file := parseLayer(t, "\n[workdir]\npath = \"/srv\"\n")
	r, err := Merge(file)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Describe("workdir.path"), `config "/cfg/x.toml": line 3: workdir.path`; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
	if r, err = Merge(file, Layer{Source: flagNames{}, WorkDir: "w"}); err != nil {
		t.Fatal(err)
	}
	if got, want := r.Describe("workdir.path"), "--path"; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
	if got, want := r.Describe("network"), "network"; got != want {
		t.Errorf("Describe of an unset key = %q, want %q", got, want)
	}
}

func TestMergeKeepsLayers(t *testing.T) {
	// Merging must not write into a caller's slices.
	flags := Layer{Network: NetworkAllowList, AllowDomains: make([]string, 1, 4)}
	flags.AllowDomains[0] = "b.example"
	file := Layer{Network: NetworkAllowList, AllowDomains: make([]string, 1, 4)}
	file.AllowDomains[0] = "a.example"
	if _, err := Merge(file, flags); err != nil {
		t.Fatal(err)
	}
	if full := file.AllowDomains[:2]; full[1] != "" {
		t.Errorf("Merge wrote into the file layer's array: %v", full)
	}
}
