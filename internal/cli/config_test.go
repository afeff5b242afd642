package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/policy"
)

// parseFlags parses args as run's flags.
func parseFlags(t *testing.T, args ...string) (*sandboxFlags, []string, error) {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.SetOutput(discard{})
	f := addSandboxFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, nil, flagError(nil, err)
	}
	return f, fs.Args(), nil
}

// writeConfig writes a config file into dir and returns its path.
func writeConfig(t *testing.T, dir, doc string) string {
	t.Helper()
	path := filepath.Join(dir, "moat.toml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func boolp(b bool) *bool { return &b }

func TestSecurityFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want moat.SecurityOverrides
		rest []string // positional arguments left
	}{
		{name: "unset flags stay nil", args: nil, want: moat.SecurityOverrides{}},
		{name: "bare flag means true", args: []string{"--allow-gpu"}, want: moat.SecurityOverrides{AllowGPU: boolp(true)}},
		{name: "=false parses", args: []string{"--protect-credentials=false"}, want: moat.SecurityOverrides{ProtectCredentials: boolp(false)}},
		{name: "=0 and =1", args: []string{"--protect-user-home=0", "--protect-keychains=1"}, want: moat.SecurityOverrides{ProtectUserHome: boolp(false), ProtectKeychains: boolp(true)}},
		{name: "every switch", args: []string{
			"--protect-user-home=false", "--protect-credentials=false", "--protect-cloud-config=false",
			"--protect-browser-data=false", "--protect-keychains=false", "--allow-gpu=true",
		}, want: moat.SecurityOverrides{
			ProtectUserHome: boolp(false), ProtectCredentials: boolp(false), ProtectCloudConfig: boolp(false),
			ProtectBrowserData: boolp(false), ProtectKeychains: boolp(false), AllowGPU: boolp(true),
		}},
		{name: "last one wins", args: []string{"--allow-gpu", "--allow-gpu=false"}, want: moat.SecurityOverrides{AllowGPU: boolp(false)}},
		{name: "a value needs =", args: []string{"--allow-gpu", "false"}, want: moat.SecurityOverrides{AllowGPU: boolp(true)}, rest: []string{"false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, rest, err := parseFlags(t, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.layer().Security; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("overrides %s, want %s", showOverrides(got), showOverrides(tt.want))
			}
			if !reflect.DeepEqual(rest, tt.rest) && len(rest)+len(tt.rest) > 0 {
				t.Errorf("arguments %q, want %q", rest, tt.rest)
			}
		})
	}
}

// showOverrides prints o with its pointers followed.
func showOverrides(o moat.SecurityOverrides) string {
	var parts []string
	v := reflect.ValueOf(o)
	for i := 0; i < v.NumField(); i++ {
		if p := v.Field(i); !p.IsNil() {
			parts = append(parts, v.Type().Field(i).Name+"="+map[bool]string{true: "true", false: "false"}[p.Elem().Bool()])
		}
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func TestIsolationFlag(t *testing.T) {
	dir := t.TempDir()
	strictFile := writeConfig(t, dir, "isolation = \"strict\"\n")
	pinConfig(t, strictFile) // hostinputs_test.go: read at isolation permissive below
	tests := []struct {
		name string
		args []string
		want moat.Isolation
		sec  moat.SecurityConfig
	}{
		{name: "the CLI defaults to default", want: moat.IsolationDefault, sec: moat.IsolationDefault.Security()},
		{name: "strict", args: []string{"--isolation", "strict"}, want: moat.IsolationStrict, sec: moat.IsolationStrict.Security()},
		{name: "permissive", args: []string{"--isolation=permissive"}, want: moat.IsolationPermissive, sec: moat.IsolationPermissive.Security()},
		{name: "from the file", args: []string{"--config", strictFile}, want: moat.IsolationStrict, sec: moat.IsolationStrict.Security()},
		{name: "the command line beats the file", args: []string{"--config", strictFile, "--isolation", "permissive"}, want: moat.IsolationPermissive, sec: moat.IsolationPermissive.Security()},
		{name: "a switch over the preset", args: []string{"--isolation", "permissive", "--protect-user-home"}, want: moat.IsolationPermissive, sec: moat.IsolationStrict.Security()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseSandboxFlags(t, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Isolation != tt.want || cfg.Security == nil || *cfg.Security != tt.sec {
				t.Errorf("isolation %v, security %+v; want %v, %+v", cfg.Isolation, cfg.Security, tt.want, tt.sec)
			}
		})
	}
}

func TestSecurityLayering(t *testing.T) {
	// The preset, then the file, then the command line.
	dir := t.TempDir()
	file := writeConfig(t, dir, "isolation = \"permissive\"\n[security]\nprotect-credentials = false\nallow-gpu = true\nprotect-browser-data = false\n")
	pinConfig(t, file) // hostinputs_test.go: the permissive sandbox could rewrite it
	cfg, err := parseSandboxFlags(t, []string{"--config", file, "--protect-credentials", "--protect-user-home=true", "--allow-gpu=false"})
	if err != nil {
		t.Fatal(err)
	}
	want := moat.SecurityConfig{
		ProtectUserHome:    true, // preset false, flag true
		ProtectCredentials: true, // file false, flag true
		// preset: split out of ProtectCredentials (issue 16)
		ProtectShellHistory:       true,
		ProtectPackageCredentials: true,
		ProtectCloudConfig:        true,  // preset
		ProtectBrowserData:        false, // file
		ProtectKeychains:          true,  // preset
		AllowGPU:                  false, // file true, flag false
	}
	if *cfg.Security != want {
		t.Errorf("security %+v, want %+v", *cfg.Security, want)
	}
}

func TestNetworkFlags(t *testing.T) {
	dir := t.TempDir()
	denyFile := writeConfig(t, mkdir(t, dir, "deny"), "network = \"deny\"\n")
	listFile := writeConfig(t, mkdir(t, dir, "list"), "network = \"allow-list\"\nallow-domains = [\"a.example\"]\nallow-local = [\"10.0.0.0/8\"]\naudit-log = \"file.jsonl\"\n")
	tests := []struct {
		name      string
		args      []string
		wantLayer string // the command line's own mode
		want      policy.Network
	}{
		{name: "unset is deny", want: policy.Network{Mode: "deny"}},
		{name: "--network deny is distinct from unset", args: []string{"--network", "deny"}, wantLayer: "deny", want: policy.Network{Mode: "deny"}},
		{name: "allow-all", args: []string{"--network", "allow-all"}, wantLayer: "allow-all", want: policy.Network{Mode: "allow-all"}},
		{name: "allow-list with domains, normalized", args: []string{"--network=allow-list", "--allow-domain", "*.Crates.IO.", "--allow-domain", "example.com:443"},
			wantLayer: "allow-list", want: policy.Network{Mode: "allow-list", AllowDomains: []string{"*.crates.io", "example.com:443"}}},
		{name: "local ranges", args: []string{"--network", "allow-all", "--allow-local", "192.168.1.5", "--allow-local", "fd00::/8"},
			wantLayer: "allow-all", want: policy.Network{Mode: "allow-all", AllowLocal: []string{"192.168.1.5/32", "fd00::/8"}}},
		{name: "audit log from the command line", args: []string{"--network", "allow-all", "--audit-log", "audit-dir", "--audit-rotate", "daily"},
			wantLayer: "allow-all", want: policy.Network{Mode: "allow-all", AuditLog: "audit-dir", AuditRotate: "daily"}},
		{name: "audit log from the file, relative to it; lists concatenated", args: []string{"--config", listFile, "--allow-domain", "b.example"},
			want: policy.Network{Mode: "allow-list", AllowDomains: []string{"a.example", "b.example"}, AllowLocal: []string{"10.0.0.0/8"}, AuditLog: filepath.Join(dir, "list", "file.jsonl")}},
		{name: "the command line's audit log beats the file's", args: []string{"--config", listFile, "--audit-log", "run.jsonl"},
			want: policy.Network{Mode: "allow-list", AllowDomains: []string{"a.example"}, AllowLocal: []string{"10.0.0.0/8"}, AuditLog: "run.jsonl"}},
		{name: "the command line's mode beats the file's", args: []string{"--config", denyFile, "--network", "allow-all"},
			wantLayer: "allow-all", want: policy.Network{Mode: "allow-all"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// config opens the audit log: relative paths land here.
			t.Chdir(t.TempDir())
			if err := os.Mkdir("audit-dir", 0o755); err != nil {
				t.Fatal(err)
			}
			f, _, err := parseFlags(t, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.layer().Network; got != tt.wantLayer {
				t.Errorf("command line's mode %q, want %q", got, tt.wantLayer)
			}
			got, err := f.network()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("network %+v, want %+v", got, tt.want)
			}
			if _, err := f.config(); err != nil {
				t.Errorf("config: %v", err)
			}
			f.closeAuditLog()
		})
	}
}

// mkdir makes dir/name and returns it.
func mkdir(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigFile(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfgDir := mkdir(t, base, "project")
	src, target, job := mkdir(t, cfgDir, "src"), mkdir(t, cfgDir, "target"), mkdir(t, cfgDir, "job")
	other := mkdir(t, base, "other")
	file := writeConfig(t, cfgDir, `
[grants]
"src" = "r"
"target" = "rw"

[limits]
max-memory = "1G"
max-processes = 64
timeout = "1m"
nice = 5

[workdir]
path = "job"

[env]
passthrough = ["TERM"]
set = { A = "file", B = "file" }
`)
	rwx := moat.READ | moat.WRITE | moat.EXEC
	cfg, err := parseSandboxFlags(t, []string{
		"--config", file, "--executable", target, "--readable", other,
		"--memory", "2G", "--nice", "0", "--env", "LANG", "--env", "B=flag",
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.WorkDir != job {
		t.Errorf("workdir %q, want %q: relative to the file", cfg.WorkDir, job)
	}
	grants := map[string]moat.Access{}
	for _, g := range cfg.Grants {
		grants[g.Path] |= g.Access
	}
	if want := map[string]moat.Access{src: moat.READ, target: rwx, other: moat.READ}; !reflect.DeepEqual(grants, want) {
		t.Errorf("grants %v, want %v: file and command line unioned", grants, want)
	}
	if cfg.Limits.MemoryBytes != 2<<30 || cfg.Limits.Processes != 64 || cfg.Limits.Timeout.String() != "1m0s" || cfg.Nice != 0 {
		t.Errorf("limits %+v nice %d: the command line's scalars win, even 0", cfg.Limits, cfg.Nice)
	}
	wantEnv := moat.Env{Passthrough: []string{"TERM", "LANG"}, Set: []string{"A=file", "B=flag"}}
	if !reflect.DeepEqual(cfg.Env, wantEnv) {
		t.Errorf("env %+v, want %+v", cfg.Env, wantEnv)
	}

	t.Run("command-line workdir beats the file's", func(t *testing.T) {
		cfg, err := parseSandboxFlags(t, []string{"--config", file, "--workdir", other})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.WorkDir != other {
			t.Errorf("workdir %q, want %q", cfg.WorkDir, other)
		}
	})
}

func TestGrantSugar(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sugar []string
		mode  string
	}{
		{[]string{"--readable", dir}, "r"},
		{[]string{"--writable", dir}, "rw"},
		{[]string{"--executable", dir}, "rx"},
		{[]string{"--writable", dir, "--executable", dir}, "rwx"},
		{[]string{"--readable", dir, "--writable", dir}, "rw"},
	} {
		sugar, err := parseSandboxFlags(t, tc.sugar)
		if err != nil {
			t.Fatal(err)
		}
		grant, err := parseSandboxFlags(t, []string{"--grant", dir + "=" + tc.mode})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(sugar, grant) {
			t.Errorf("%q gives %+v; --grant %s=%s gives %+v", tc.sugar, sugar.Grants, dir, tc.mode, grant.Grants)
		}
	}
}

func TestPolicyFlagErrors(t *testing.T) {
	dir := t.TempDir()
	audit := filepath.Join(dir, "audit.jsonl")
	unknown := writeConfig(t, mkdir(t, dir, "unknown"), "network = \"deny\"\n\ngrantz = 1\n")
	badMode := writeConfig(t, mkdir(t, dir, "mode"), "[grants]\n\"/usr\" = \"r\"\n\"/srv\" = \"wx\"\n")
	denyFile := writeConfig(t, mkdir(t, dir, "deny"), "network = \"deny\"\n")
	fileAudit := writeConfig(t, mkdir(t, dir, "audit"), "network = \"allow-all\"\naudit-log = \"a.jsonl\"\n")
	missingWork := writeConfig(t, mkdir(t, dir, "work"), "\n[workdir]\npath = \"moat.toml/nope\"\n")
	tests := []struct {
		name string
		args []string
		want string // the whole message, without "moat: "
	}{
		{name: "allow-list needs domains", args: []string{"--network", "allow-list"}, want: `--network "allow-list": no domain to allow; add --allow-domain`},
		{name: "audit log rejected with network unset", args: []string{"--audit-log", audit}, want: `--audit-log "` + audit + `": needs --network allow-all or allow-list; with no network no proxy runs and there is nothing to record`},
		{name: "audit log rejected with deny", args: []string{"--network", "deny", "--audit-log", audit}, want: `--audit-log "` + audit + `": needs --network allow-all or allow-list; with no network no proxy runs and there is nothing to record`},
		{name: "audit log rejected with the file's deny", args: []string{"--config", denyFile, "--audit-log", audit}, want: `--audit-log "` + audit + `": needs --network allow-all or allow-list; with no network no proxy runs and there is nothing to record`},
		{name: "file's audit log rejected with the command line's deny", args: []string{"--config", fileAudit, "--network", "deny"},
			want: `config "` + fileAudit + `": line 2: audit-log "` + filepath.Join(dir, "audit", "a.jsonl") + `": needs network allow-all or allow-list; with no network no proxy runs and there is nothing to record`},
		{name: "rotation without a log", args: []string{"--network", "allow-all", "--audit-rotate", "daily"}, want: `--audit-rotate "daily": needs --audit-log`},
		{name: "domains without allow-list", args: []string{"--allow-domain", "example.com"}, want: `--allow-domain "example.com": needs --network allow-list`},
		{name: "unknown key names file and line", args: []string{"--config", unknown}, want: `config "` + unknown + `": line 3: unknown key "grantz"`},
		{name: "bad mode in grants names its line", args: []string{"--config", badMode}, want: `config "` + badMode + `": line 3: grants "/srv": access "wx": missing r; write it as rwx`},
		{name: "missing config file", args: []string{"--config", filepath.Join(dir, "none.toml")}, want: `config "` + filepath.Join(dir, "none.toml") + `": no such file or directory`},
		{name: "file's workdir under a file", args: []string{"--config", missingWork}, want: `config "` + missingWork + `": line 3: workdir.path "` + filepath.Join(dir, "work", "moat.toml", "nope") + `": not a directory`},
		{name: "empty config name", args: []string{"--config", ""}, want: `--config "": empty path`},
		{name: "bad network", args: []string{"--network", "allow-some"}, want: `--network "allow-some": want deny, allow-all or allow-list`},
		{name: "bad domain", args: []string{"--allow-domain", "https://example.com"}, want: `--allow-domain "https://example.com": want a host, *.domain, IP address or CIDR prefix, optionally with :PORT, not a URL or path`},
		{name: "empty domain", args: []string{"--allow-domain="}, want: `--allow-domain "": empty pattern`},
		{name: "bad local", args: []string{"--allow-local", "10.0.0.0/40"}, want: `--allow-local "10.0.0.0/40": want a CIDR prefix like 10.0.0.0/8 or an IP address`},
		{name: "bad rotation", args: []string{"--audit-rotate", "weekly"}, want: `--audit-rotate "weekly": want "daily"`},
		{name: "empty audit log", args: []string{"--audit-log", ""}, want: `--audit-log "": empty path`},
		{name: "bad isolation", args: []string{"--isolation", "loose"}, want: `--isolation "loose": want strict, default or permissive`},
		{name: "bad switch value", args: []string{"--allow-gpu=maybe"}, want: `--allow-gpu "maybe": want true or false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseSandboxFlags(t, tt.args)
			if err == nil {
				t.Fatal("no error")
			}
			code, line := exitCode(err)
			if code != exitUsage {
				t.Errorf("exit code %d, want %d", code, exitUsage)
			}
			if want := "moat: " + tt.want; line != want {
				t.Errorf("message\n%s\nwant\n%s", line, want)
			}
			if _, err := os.Stat(audit); !os.IsNotExist(err) {
				t.Errorf("the audit log exists after a usage error: %v", err)
			}
		})
	}
}

// runArgs runs the moat command line up to run's RunE, which it replaces,
// and returns the arguments run would execute.
func runArgs(t *testing.T, args ...string) ([]string, error) {
	t.Helper()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	root := newRoot(stdio{in: null, out: null, err: null})
	run, _, err := root.Find([]string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	run.RunE = func(_ *cobra.Command, a []string) error {
		got = a
		return nil
	}
	root.SetArgs(args)
	return got, root.Execute()
}

func TestProgramFlagsNotStolen(t *testing.T) {
	file := writeConfig(t, t.TempDir(), "")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "after --", args: []string{"run", "--", "sh", "-c", "echo hi"}, want: []string{"sh", "-c", "echo hi"}},
		{name: "after the command", args: []string{"run", "sh", "-c", "echo hi"}, want: []string{"sh", "-c", "echo hi"}},
		{name: "with --config", args: []string{"run", "--config", file, "python3", "-c", "print(1)"}, want: []string{"python3", "-c", "print(1)"}},
		{name: "policy flags after the command are the command's", args: []string{"run", "--network", "deny", "prog", "--network", "allow-all", "--allow-gpu", "-c"}, want: []string{"prog", "--network", "allow-all", "--allow-gpu", "-c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runArgs(t, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("command %q, want %q", got, tt.want)
			}
		})
	}
	// -c is heel's --config (heel_test.go), and only before the command.
	t.Run("-c before the command is --config", func(t *testing.T) {
		got, err := runArgs(t, "run", "-c", file, "true", "-c", "x")
		if err != nil || !reflect.DeepEqual(got, []string{"true", "-c", "x"}) {
			t.Errorf("run -c FILE true -c x: command %q, %v", got, err)
		}
	})
}

func TestPolicyUsageErrorsEndToEnd(t *testing.T) {
	// Through the real command line: exit 2, one line, nothing run.
	for _, args := range [][]string{
		{"run", "--network", "allow-list", "--", "true"},
		{"run", "--audit-log", "x.jsonl", "--", "true"},
		{"shell", "--network", "deny", "--audit-log", "x.jsonl"},
		{"shell", "--isolation", "loose"},
	} {
		code, stdout, stderr := executeCaptured(t, args...)
		if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "moat: ") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one line", args, code, stdout, stderr)
		}
	}
}
