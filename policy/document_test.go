package policy

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

func TestParseDocumentRejects(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"array", `[1]`, "policy JSON must be an object"},
		{"string", `"x"`, "policy JSON must be an object"},
		{"null", `null`, "policy JSON must be an object"},
		{"unknown top", `{"command":["true"],"bogus":1}`, "unknown policy field: bogus"},
		{"unknown filesystem", `{"command":["true"],"filesystem":{"bogus":[]}}`, "unknown policy field: filesystem.bogus"},
		{"unknown env", `{"command":["true"],"env":{"bogus":[]}}`, "unknown policy field: env.bogus"},
		{"unknown limits", `{"command":["true"],"limits":{"max-memory":"1G"}}`, "unknown policy field: limits.max-memory"},
		{"unknown protection", `{"command":["true"],"protections":{"bogus":true}}`, "unknown policy field: protections.bogus"},
		{"heimdall microvm runtime", `{"command":["true"],"runtime":"microvm"}`, "unknown policy field: runtime"},
		{"disabled", `{"command":["true"],"enabled":false}`, "enabled=false is not supported"},
		{"no command", `{"cwd":"."}`, "missing command"},
		{"empty command", `{"command":[]}`, "missing command"},
		{"empty program", `{"command":[""]}`, "command[0]: empty program name"},
		{"command not strings", `{"command":["a",1]}`, "command[1]: want a string, not a number"},
		{"command NUL", `{"command":["a\u0000b"]}`, "NUL"},
		{"duplicate key", `{"command":["true"],"network":"none","network":"host"}`, "duplicate policy field: network"},
		{"duplicate nested key", `{"command":["true"],"env":{"deny":[],"deny":["A"]}}`, "duplicate policy field: env.deny"},
		{"trailing", `{"command":["true"]} {}`, "more after the document"},
		{"syntax", `{"command":["true"]`, "invalid JSON"},
		{"bad stdio", `{"command":["true"],"stdio":"tty"}`, `stdio "tty": want inherit or piped`},
		{"bad network", `{"command":["true"],"network":"deny"}`, `network "deny": want none, host, allow-all or allow-list`},
		{"bad proc", `{"command":["true"],"proc":"hidden"}`, `proc "hidden"`},
		{"network type", `{"command":["true"],"network":false}`, "network: want a string"},
		{"enabled type", `{"command":["true"],"enabled":"yes"}`, "enabled: want true or false"},
		{"relative virtual", `{"command":["true"],"filesystem":{"virtual":{"etc/x":"y"}}}`, `filesystem.virtual target "etc/x" must be absolute`},
		{"virtual root", `{"command":["true"],"filesystem":{"virtual":{"/":"y"}}}`, "root directory"},
		{"virtual value", `{"command":["true"],"filesystem":{"virtual":{"/x":1}}}`, "filesystem.virtual./x: want a string"},
		{"bad pattern", `{"command":["true"],"filesystem":{"writable":["[abc"]}}`, `filesystem.writable: invalid filesystem pattern "[abc"`},
		{"empty pattern", `{"command":["true"],"filesystem":{"deny":[""]}}`, "filesystem.deny: empty pattern"},
		{"env allow LD", `{"command":["true"],"env":{"allow":["LD_PRELOAD"]}}`, "never passed"},
		{"env allow bad name", `{"command":["true"],"env":{"allow":["A-B"]}}`, "not a valid variable name"},
		{"env set LD", `{"command":["true"],"env":{"set":{"LD_PRELOAD":"x"}}}`, "never passed"},
		{"allow list no domains", `{"command":["true"],"network":"allow-list"}`, "no domain to allow; add allowDomains"},
		{"domains without allow list", `{"command":["true"],"allowDomains":["example.com"]}`, `allowDomains "example.com": needs network allow-list`},
		{"bad domain", `{"command":["true"],"network":"allow-list","allowDomains":["exa mple"]}`, `allowDomains "exa mple"`},
		{"audit without proxy", `{"command":["true"],"auditLog":"a.jsonl"}`, "needs network allow-all or allow-list"},
		{"host with domains", `{"command":["true"],"network":"host","allowDomains":["example.com"]}`, "host network runs no proxy"},
		{"host with audit", `{"command":["true"],"network":"host","auditLog":"a"}`, "nothing would be recorded"},
		{"host with local", `{"command":["true"],"network":"host","allowLocal":["10.0.0.0/8"]}`, "host network runs no proxy"},
		{"bad grant", `{"command":["true"],"grants":{"/usr":"w"}}`, `grants./usr "w": want r, rw, rx or rwx`},
		{"empty grant", `{"command":["true"],"grants":{"":"r"}}`, `grants "": empty path`},
		{"bad size", `{"command":["true"],"limits":{"memory":"12X"}}`, `limits.memory "12X": want a size`},
		{"negative size", `{"command":["true"],"limits":{"memory":-1}}`, "want 0 through"},
		{"fraction", `{"command":["true"],"limits":{"processes":1.5}}`, "without a fraction"},
		{"huge", `{"command":["true"],"limits":{"disk":1e30}}`, "without a fraction or exponent"},
		{"too large", `{"command":["true"],"limits":{"disk":99999999999999999999}}`, "too large"},
		{"timeout overflow", `{"command":["true"],"limits":{"timeout":9223372036854775807}}`, "too large"},
		{"nice range", `{"command":["true"],"limits":{"nice":20}}`, "want 0 through 19"},
		{"io priority", `{"command":["true"],"limits":{"ioPriority":"idle"}}`, `limits.ioPriority "idle"`},
		{"isolation", `{"command":["true"],"isolation":"none"}`, `isolation "none"`},
		{"enforcement", `{"command":["true"],"enforcement":"lax"}`, `enforcement "lax"`},
		{"protection type", `{"command":["true"],"protections":{"allowGPU":1}}`, "protections.allowGPU: want true or false"},
		{"deep nesting", `{"command":["true"],"env":{"allow":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}}`, "nested too deeply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseDocument([]byte(tt.doc))
			if err == nil {
				t.Fatalf("accepted %s as %+v; want an error mentioning %q", tt.doc, d, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q, want it to mention %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q spans lines", err)
			}
		})
	}
	// The positive control of the table: the base document is accepted.
	if _, err := ParseDocument([]byte(`{"command":["true"]}`)); err != nil {
		t.Fatalf("the minimal document is refused: %v", err)
	}
}

func TestParseDocumentAccepts(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	yes, no := true, false
	tests := []struct {
		name string
		doc  string
		want Document
	}{
		{"minimal", `{"command":["true"]}`, Document{Command: []string{"true"}}},
		{"heimdall fields", `{"command":["sh","-c","x"],"cwd":"~/p","stdio":"piped","network":"host","proc":"none","enabled":true,"sshAgent":true,"gpgAgent":true,"ageAgent":true}`,
			Document{Command: []string{"sh", "-c", "x"}, Cwd: "~/p", Stdio: StdioPiped, Network: NetworkHost, Proc: ProcNone, SSHAgent: true, GPGAgent: true, AgeAgent: true}},
		{"env allowlist with deny", `{"command":["x"],"env":{"allow":["A","S"],"deny":["S"]}}`,
			Document{Command: []string{"x"}, Env: DocumentEnv{Allow: []string{"A", "S"}, Deny: []string{"S"}}}},
		{"env blocklist", `{"command":["x"],"env":{"deny":["SECRET"]}}`,
			Document{Command: []string{"x"}, Env: DocumentEnv{Deny: []string{"SECRET"}, Blocklist: true}}},
		{"env set", `{"command":["x"],"env":{"set":{"B":"2","A":"1"}}}`,
			Document{Command: []string{"x"}, Env: DocumentEnv{Set: []EnvVar{{Name: "B", Value: "2", Set: true}, {Name: "A", Value: "1", Set: true}}}}},
		{"filesystem", `{"command":["x"],"filesystem":{"deny":[".env*","!.env.example"],"writable":["src/**"],"virtual":{"/etc//passwd":"nobody\n"}}}`,
			Document{Command: []string{"x"}, Filesystem: DocumentFilesystem{Deny: []string{".env*", "!.env.example"}, Writable: []string{"src/**"}, Virtual: map[string]string{"/etc/passwd": "nobody\n"}}}},
		{"network allow list", `{"command":["x"],"network":"allow-list","allowDomains":["PyPI.org.","*.pythonhosted.org"],"allowLocal":["10.1.2.3/8"],"auditLog":"a.jsonl","auditRotate":"daily"}`,
			Document{Command: []string{"x"}, Network: NetworkAllowList, AllowDomains: []string{"pypi.org", "*.pythonhosted.org"}, AllowLocal: []string{"10.0.0.0/8"}, AuditLog: "a.jsonl", AuditRotate: RotateDaily}},
		{"grants in order", `{"command":["x"],"grants":{"/z":"rwx","~/d":"r"}}`,
			Document{Command: []string{"x"}, Grants: []moat.PathRequest{{Path: "/z", Access: moat.READ | moat.WRITE | moat.EXEC}, {Path: "~/d", Access: moat.READ}}}},
		{"protections", `{"command":["x"],"protections":{"protectCredentials":false,"allowGPU":true}}`,
			Document{Command: []string{"x"}, Protections: moat.SecurityOverrides{ProtectCredentials: &no, AllowGPU: &yes}}},
		{"limits", `{"command":["x"],"limits":{"memory":"2G","cpuTime":60,"fileSize":1024,"processes":"unlimited","openFiles":64,"disk":"unlimited","diskInodes":100,"timeout":"1m30s","nice":5,"ioPriority":"background"}}`,
			func() Document {
				d := Document{Command: []string{"x"}}
				d.Limits = Limits{MemoryBytes: i64(2 << 30), CPUSeconds: i64(60), FileSizeBytes: i64(1024), Processes: i64(-1), OpenFiles: i64(64), DiskBytes: i64(-1), DiskInodes: i64(100)}
				to := 90 * time.Second
				nice := 5
				io := moat.IOPriorityBackground
				d.Limits.Timeout, d.Limits.Nice, d.Limits.IOPriority = &to, &nice, &io
				return d
			}()},
		{"isolation enforcement build", `{"command":["x"],"isolation":"strict","enforcement":"best-effort","build":true}`,
			func() Document {
				iso, e := moat.IsolationStrict, moat.BestEffort
				return Document{Command: []string{"x"}, Isolation: &iso, Enforcement: &e, Build: &yes}
			}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseDocument([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			if !documentsEqual(d, &tt.want) {
				t.Fatalf("got  %+v\nwant %+v", *d, tt.want)
			}
			// And it reads back the same after MarshalJSON.
			b, err := d.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			again, err := ParseDocument(b)
			if err != nil || !documentsEqual(d, again) {
				t.Fatalf("re-encoded %s reads as %+v, %v", b, again, err)
			}
		})
	}
}

// documentsEqual compares documents, an empty list equal to none.
func documentsEqual(a, b *Document) bool {
	norm := func(d Document) Document {
		e := func(s []string) []string {
			if len(s) == 0 {
				return nil
			}
			return s
		}
		d.Env.Allow, d.Env.Deny = e(d.Env.Allow), e(d.Env.Deny)
		d.Filesystem.Deny, d.Filesystem.Writable = e(d.Filesystem.Deny), e(d.Filesystem.Writable)
		d.AllowDomains, d.AllowLocal = e(d.AllowDomains), e(d.AllowLocal)
		if len(d.Filesystem.Virtual) == 0 {
			d.Filesystem.Virtual = nil
		}
		if len(d.Grants) == 0 {
			d.Grants = nil
		}
		if len(d.Env.Set) == 0 {
			d.Env.Set = nil
		}
		return d
	}
	return reflect.DeepEqual(norm(*a), norm(*b))
}

func TestReadDocumentErrorNamesTheFile(t *testing.T) {
	_, err := ReadDocument("p.json", strings.NewReader(`{"command":["true"],"bogus":1}`))
	var de *DocumentError
	if !errors.As(err, &de) || err.Error() != `policy "p.json": unknown policy field: bogus` {
		t.Fatalf("error %v, want a *DocumentError naming p.json", err)
	}
	_, err = ReadDocument("-", strings.NewReader(`[]`))
	if err == nil || err.Error() != "policy: policy JSON must be an object" {
		t.Fatalf("stdin error %v", err)
	}
	_, err = ReadDocument("big", strings.NewReader(`{"command":["`+strings.Repeat("a", maxDocumentSize)+`"]}`))
	if err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Fatalf("oversized document: %v", err)
	}
}

func TestExpandPath(t *testing.T) {
	env := []string{"HOME=/home/u", "P=proj", "EMPTY="}
	tests := []struct {
		in, want, err string
	}{
		{in: "~", want: "/home/u"},
		{in: "~/x", want: "/home/u/x"},
		{in: "$HOME/$P", want: "/home/u/proj"},
		{in: "${HOME}/a${P}b", want: "/home/u/aprojb"},
		{in: "a$", want: "a$"},
		{in: "x$EMPTY", want: "x"},
		{in: "$NOPE/x", err: "$NOPE is not set"},
		{in: "${HOME", err: "unclosed"},
		{in: "~root", err: "only ~ and ~/"},
		{in: "/plain", want: "/plain"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ExpandPath(tt.in, env)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ExpandPath(%q) = %q, %v; want error %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ExpandPath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestDocumentEnvEntries(t *testing.T) {
	environ := []string{"A=1", "S=2", "PATH=/bin", "HOME=/h", "http_proxy=x", "SSH_AUTH_SOCK=/s", "LD_PRELOAD=x", "BAD-NAME=1", "B=\xff"}
	names := func(es []EnvVar) []string {
		var out []string
		for _, e := range es {
			out = append(out, entryString(e))
		}
		return out
	}
	tests := []struct {
		name   string
		env    DocumentEnv
		agents Agents
		want   []string
	}{
		{"empty allowlist passes nothing", DocumentEnv{}, Agents{}, nil},
		{"allowlist", DocumentEnv{Allow: []string{"A"}}, Agents{}, []string{"A"}},
		{"deny overrides allow", DocumentEnv{Allow: []string{"A", "S"}, Deny: []string{"S"}}, Agents{}, []string{"A"}},
		{"blocklist keeps moat's own and agents' variables out", DocumentEnv{Deny: []string{"S"}, Blocklist: true}, Agents{}, []string{"A", "B"}},
		{"opted-in agent passes in allowlist mode", DocumentEnv{}, Agents{Env: []string{"SSH_AUTH_SOCK"}}, []string{"SSH_AUTH_SOCK"}},
		{"set comes last", DocumentEnv{Allow: []string{"A"}, Set: []EnvVar{{Name: "A", Value: "v", Set: true}}}, Agents{}, []string{"A", "A=v"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Document{Command: []string{"x"}, Env: tt.env}
			if got := names(d.envEntries(environ, tt.agents)); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("entries %q, want %q", got, tt.want)
			}
		})
	}
}

// entryString spells an entry as --env does, for the test's messages.
func entryString(e EnvVar) string {
	if e.Set {
		return e.Name + "=" + e.Value
	}
	return e.Name
}

func TestDocumentExecCwd(t *testing.T) {
	dir := t.TempDir()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	host := ExecHost{Environ: []string{"HOME=" + dir, "D=" + dir}, Dir: dir}
	tests := []struct {
		name, cwd, want, err string
	}{
		{name: "default is the current directory", want: real},
		{name: "dot", cwd: ".", want: real},
		{name: "tilde", cwd: "~", want: real},
		{name: "variable", cwd: "$D", want: real},
		{name: "missing", cwd: "nope", err: "invalid cwd: nope"},
		{name: "a file", cwd: file, err: "invalid cwd: " + file},
		{name: "unset variable", cwd: "$NOPE", err: "invalid cwd: $NOPE: $NOPE is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Document{Command: []string{"true"}, Cwd: tt.cwd}
			got, err := d.cwd(host, dir)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("cwd %q, %v; want error %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("cwd %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestDocumentExecConfig(t *testing.T) {
	dir := t.TempDir()
	host := ExecHost{Environ: []string{"HOME=" + dir, "A=1", "SECRET=2"}, Dir: dir}
	tests := []struct {
		name  string
		doc   string
		check func(t *testing.T, e *Exec)
		err   string
	}{
		{name: "an empty policy still sandboxes", doc: `{"command":["true"]}`, check: func(t *testing.T, e *Exec) {
			c := e.Config
			if c.WorkDir != "" || c.Network != nil || c.Isolation != moat.IsolationDefault || c.Enforcement != moat.Strict || c.Env.Passthrough != nil {
				t.Fatalf("config %+v: want an automatic workdir, no network, default isolation, strict, no host variables", c)
			}
			if c.Security == nil || !c.Security.ProtectCredentials {
				t.Fatal("protections are off")
			}
			if e.Piped || e.Dir == "" || e.Command[0] != "true" {
				t.Fatalf("exec %+v", e)
			}
		}},
		{name: "allow-all", doc: `{"command":["true"],"network":"allow-all"}`, check: func(t *testing.T, e *Exec) {
			if e.Config.Network == nil || e.Config.Network == moat.HostNetwork() {
				t.Fatalf("network %v, want moat's proxy", e.Config.Network)
			}
		}},
		{name: "env", doc: `{"command":["true"],"env":{"allow":["A","SECRET"],"deny":["SECRET"]}}`, check: func(t *testing.T, e *Exec) {
			if !reflect.DeepEqual(e.Config.Env.Passthrough, []string{"A"}) {
				t.Fatalf("passthrough %q, want [A]", e.Config.Env.Passthrough)
			}
		}},
		{name: "limits and protections reach the Config", doc: `{"command":["true"],"limits":{"memory":"1G","timeout":5},"protections":{"protectKeychains":false},"isolation":"strict"}`, check: func(t *testing.T, e *Exec) {
			c := e.Config
			if c.Limits.MemoryBytes != 1<<30 || c.Limits.Timeout != 5*time.Second || c.Security.ProtectKeychains || c.Isolation != moat.IsolationStrict {
				t.Fatalf("config %+v", c)
			}
		}},
		{name: "grant relative to cwd, named as the document does", doc: `{"command":["true"],"grants":{"sub":"r"}}`, err: `grants "` + filepath.Join(dir, "sub") + `": no such file`},
		{name: "the cwd readable, not writable", doc: `{"command":["true"]}`, check: func(t *testing.T, e *Exec) {
			real, _ := filepath.EvalSymlinks(dir)
			for _, g := range e.Config.Grants {
				if g.Path == real {
					if g.Access.CanWrite() {
						t.Fatalf("the cwd is granted %v", g.Access)
					}
					return
				}
			}
			t.Fatalf("no grant of the cwd %s in %v", real, e.Config.Grants)
		}},
		{name: "a broad writable pattern makes the cwd writable", doc: `{"command":["true"],"filesystem":{"writable":["."]}}`, check: func(t *testing.T, e *Exec) {
			real, _ := filepath.EvalSymlinks(dir)
			for _, g := range e.Config.Grants {
				if g.Path == real && g.Access.CanWrite() {
					return
				}
			}
			t.Fatalf("no writable grant of the cwd %s in %v", real, e.Config.Grants)
		}},
		{name: "virtual files and proc reach the Config", doc: `{"command":["true"],"proc":"none","filesystem":{"virtual":{"/etc/motd":"hi"}}}`, check: func(t *testing.T, e *Exec) {
			if !e.Config.HideProc || e.Config.VirtualFiles["/etc/motd"] != "hi" {
				t.Fatalf("config %+v", e.Config)
			}
		}},
		{name: "host network", doc: `{"command":["true"],"network":"host"}`, check: func(t *testing.T, e *Exec) {
			if e.Config.Network != moat.HostNetwork() {
				t.Fatalf("network %v, want moat.HostNetwork", e.Config.Network)
			}
		}},
		{name: "best effort", doc: `{"command":["true"],"enforcement":"best-effort"}`, check: func(t *testing.T, e *Exec) {
			if e.Config.Enforcement != moat.BestEffort {
				t.Fatal("enforcement not best-effort")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseDocument([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			e, err := d.Exec(host)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Exec: %v; want an error mentioning %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			tt.check(t, e)
		})
	}
}

// TestDocumentMatchesTOML: a policy document and a TOML config file that
// say the same give the same merged Config, network and grants.
func TestDocumentMatchesTOML(t *testing.T) {
	toml := `isolation = "permissive"
network = "allow-list"
allow-domains = ["pypi.org", "*.pythonhosted.org:443"]
allow-local = ["10.0.0.0/8"]
build = true

[security]
protect-credentials = false
allow-gpu = true

[grants]
"/usr/share" = "r"
"/opt" = "rx"

[limits]
max-memory = "2G"
max-cpu-time = 60
max-file-size = "1G"
max-processes = 256
max-open-files = "unlimited"
max-disk = "10G"
max-disk-inodes = 5000
timeout = "5m"
nice = 10
io-priority = "background"
`
	doc := `{"command":["true"],"isolation":"permissive","network":"allow-list",
"allowDomains":["pypi.org","*.pythonhosted.org:443"],"allowLocal":["10.0.0.0/8"],"build":true,
"protections":{"protectCredentials":false,"allowGPU":true},
"grants":{"/usr/share":"r","/opt":"rx"},
"limits":{"memory":"2G","cpuTime":60,"fileSize":"1G","processes":256,"openFiles":"unlimited","disk":"10G","diskInodes":5000,"timeout":"5m","nice":10,"ioPriority":"background"}}`
	file, err := Parse("/cfg/moat.toml", []byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	fromTOML, err := Merge(file.Layer)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ParseDocument([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	fromDoc, err := Merge(d.layer())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromTOML.Config, fromDoc.Config) {
		t.Errorf("Config\n%+v\nfrom TOML, from the document\n%+v", fromTOML.Config, fromDoc.Config)
	}
	if !reflect.DeepEqual(fromTOML.Network, fromDoc.Network) || !reflect.DeepEqual(fromTOML.Grants, fromDoc.Grants) {
		t.Errorf("network/grants differ:\n%+v %+v\n%+v %+v", fromTOML.Network, fromTOML.Grants, fromDoc.Network, fromDoc.Grants)
	}
	// The control: one setting changed shows as a difference.
	d.Limits.Nice = new(int)
	changed, _ := Merge(d.layer())
	if reflect.DeepEqual(fromTOML.Config, changed.Config) {
		t.Error("control: a different nice compares equal")
	}
}
