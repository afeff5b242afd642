package policy

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/moat-sandbox/moat"
)

func TestNetworkPolicy(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name       string
		in         Network
		wantPolicy string // "", "allow-all", "allow-list", "audited"
		wantLocal  int
		wantErr    string
	}{
		{name: "deny runs no proxy", in: Network{Mode: "deny"}},
		{name: "unset is deny", in: Network{}},
		{name: "allow-all", in: Network{Mode: "allow-all"}, wantPolicy: "allow-all"},
		{name: "allow-list", in: Network{Mode: "allow-list", AllowDomains: []string{"*.example.com", "pypi.org:443"}}, wantPolicy: "allow-list"},
		{name: "local ranges", in: Network{Mode: "allow-all", AllowLocal: []string{"127.0.0.1/32", "fd00::/8"}}, wantPolicy: "allow-all", wantLocal: 2},
		{name: "audit log", in: Network{Mode: "allow-all", AuditLog: filepath.Join(dir, "a.jsonl")}, wantPolicy: "audited"},
		{name: "daily audit log", in: Network{Mode: "allow-all", AuditLog: dir, AuditRotate: "daily"}, wantPolicy: "audited"},
		{name: "audit log in a missing directory", in: Network{Mode: "allow-all", AuditLog: filepath.Join(dir, "no", "a.jsonl")}, wantErr: "--audit-log"},
		{name: "bad pattern", in: Network{Mode: "allow-list", AllowDomains: []string{"a*b"}}, wantErr: "--allow-domain"},
		{name: "bad local range", in: Network{Mode: "allow-all", AllowLocal: []string{"10.0.0.1/99"}}, wantErr: "--allow-local"},
		{name: "unknown mode", in: Network{Mode: "allow-some"}, wantErr: `--network "allow-some": want deny, allow-all or allow-list`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cfg moat.Config
			log, err := networkPolicy(tt.in, &cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.HasPrefix(err.Error(), "moat: ") {
					t.Fatalf("err = %v, want an error about %s", err, tt.wantErr)
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

func TestSocketPaths(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	link := filepath.Join(dir, "link")
	if err := os.Symlink(sock, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, in, want, err string
	}{
		{name: "socket", in: sock, want: sock},
		{name: "user's link followed", in: link, want: sock},
		{name: "regular file", in: file, err: "not a Unix socket"},
		{name: "directory", in: dir, err: "not a Unix socket"},
		{name: "missing", in: filepath.Join(dir, "nope"), err: "no such file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := socketPaths([]string{c.in})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "--allow-socket") {
					t.Fatalf("error %v, want one naming --allow-socket and %q", err, c.err)
				}
				return
			}
			if err != nil || len(got) != 1 || got[0] != c.want {
				t.Fatalf("got %v, %v; want [%s]", got, err, c.want)
			}
		})
	}
}

// TestResolve: one Result, from any front end, becomes the final Config;
// each refusal names the setting as the layer that set it spells it, and
// leaves nothing behind.
func TestResolve(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(base, "work")
	ro := filepath.Join(base, "ro")
	home := filepath.Join(base, "home")
	for _, d := range []string{work, ro, home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "secret"), filepath.Join(work, "planted")); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(base, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	audit := filepath.Join(base, "audit.jsonl")
	fileLayer := func(doc string) Layer {
		t.Helper()
		f, err := Parse(filepath.Join(base, "moat.toml"), []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		return f.Layer
	}
	// flagNames spells workdir.path --path, limits.max-open-files
	// --max-open-files.
	cli := func(l Layer) Layer { l.Source = flagNames{}; return l }
	be := moat.BestEffort
	tests := []struct {
		name    string
		layers  []Layer
		check   func(t *testing.T, r Resolved)
		wantErr string // the whole message
	}{
		{name: "nothing is the zero config at strict isolation", layers: nil, check: func(t *testing.T, r Resolved) {
			if r.Config.WorkDir != "" || r.Config.Grants != nil || r.Config.Network != nil || r.AuditLog != nil || r.Config.Enforcement != moat.Strict {
				t.Errorf("config %+v", r.Config)
			}
		}},
		{name: "every path resolved, network built, log opened",
			layers: []Layer{cli(Layer{WorkDir: work, Grants: []moat.PathRequest{{Path: ro, Access: moat.READ}}, Sockets: []string{sock}, Home: home,
				Network: NetworkAllowList, AllowDomains: []string{"pypi.org"}, AllowLocal: []string{"10.0.0.0/8"}, AuditLog: audit,
				Enforcement: &be, AllowHomeWorkDir: ptr(true)})},
			check: func(t *testing.T, r Resolved) {
				c := r.Config
				if c.WorkDir != work || len(c.Grants) != 1 || c.Grants[0].Path != ro || len(c.Sockets) != 1 || c.Sockets[0] != sock || c.Home != home {
					t.Errorf("paths: %+v", c)
				}
				if _, ok := c.Network.(*moat.AuditedPolicy); !ok || r.AuditLog == nil || len(c.AllowLocal) != 1 {
					t.Errorf("network %T, log %v, local %v", c.Network, r.AuditLog, c.AllowLocal)
				}
				if c.Enforcement != moat.BestEffort || !c.AllowHomeWorkDir {
					t.Errorf("enforcement %v, allow home workdir %v", c.Enforcement, c.AllowHomeWorkDir)
				}
				if err := c.Validate(); err != nil {
					t.Errorf("the resolved config is not valid: %v", err)
				}
			}},
		// A missing working directory is created (heel_test.go); one that
		// cannot be, under a file, is refused.
		{name: "workdir under a file, from the command line", layers: []Layer{cli(Layer{WorkDir: filepath.Join(file, "nope")})},
			wantErr: `--path "` + filepath.Join(file, "nope") + `": not a directory`},
		{name: "workdir under a file, from the file", layers: []Layer{fileLayer("\n[workdir]\npath = \"file/nope\"\n")},
			wantErr: `config "` + filepath.Join(base, "moat.toml") + `": line 3: workdir.path "` + filepath.Join(file, "nope") + `": not a directory`},
		{name: "workdir is a file", layers: []Layer{cli(Layer{WorkDir: file})}, wantErr: `--path "` + file + `": not a directory`},
		{name: "workdir refused by moat.CheckWorkDir", layers: []Layer{cli(Layer{WorkDir: "/"})},
			wantErr: `--path "/": is the root directory: the working directory is writable, so it must be a directory of its own`},
		{name: "grant of the root", layers: []Layer{cli(Layer{Grants: []moat.PathRequest{{Path: "/usr/..", Access: moat.READ}}})},
			wantErr: `--grant "/": is the root directory; grant the directories the command needs instead`},
		{name: "too few open files, by moat's own rule", layers: []Layer{cli(Layer{Limits: Limits{OpenFiles: ptr(int64(3))}})},
			wantErr: `--max-open-files 3: too few for the sandbox's helper and the command's standard streams; want at least 32`},
		{name: "too few open files, from the file", layers: []Layer{fileLayer("[limits]\nmax-open-files = 5\n")},
			wantErr: `config "` + filepath.Join(base, "moat.toml") + `": line 2: limits.max-open-files 5: too few for the sandbox's helper and the command's standard streams; want at least 32`},
		{name: "planted link in the workdir", layers: []Layer{cli(Layer{WorkDir: work, Grants: []moat.PathRequest{{Path: filepath.Join(work, "planted"), Access: moat.READ}}})},
			wantErr: "symbolic link"},
		{name: "missing grant", layers: []Layer{cli(Layer{Grants: []moat.PathRequest{{Path: filepath.Join(base, "nope"), Access: moat.READ}}})},
			wantErr: `--grant "` + filepath.Join(base, "nope") + `": no such file or directory`},
		{name: "socket that is a file", layers: []Layer{cli(Layer{Sockets: []string{file}})}, wantErr: `--allow-socket "` + file + `": not a Unix socket`},
		{name: "home refused by moat.CheckHome", layers: []Layer{cli(Layer{Home: file})}, wantErr: `home "` + file + `": `},
		{name: "audit log inside the workdir", layers: []Layer{cli(Layer{WorkDir: work, Network: NetworkAllowAll, AuditLog: filepath.Join(work, "a.jsonl")})},
			wantErr: `--audit-log "` + filepath.Join(work, "a.jsonl") + `": `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Build(tt.layers...)
			if tt.wantErr != "" {
				if err == nil || strings.HasPrefix(err.Error(), "moat: ") || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Build = %v, want an error with %q", err, tt.wantErr)
				}
				if r.AuditLog != nil {
					t.Errorf("a refused Build left an audit log open")
				}
				if _, err := os.Stat(filepath.Join(work, "a.jsonl")); err == nil {
					t.Errorf("a refused audit log was created")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			tt.check(t, r)
		})
	}
	if err := (&Resolved{}).Close(); err != nil {
		t.Errorf("closing nothing: %v", err)
	}
}

// TestResolveKeepsTheCause: an error that names the setting again still
// carries the library's error, for errors.Is and errors.As.
func TestResolveKeepsTheCause(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var place *moat.PlaceError
	var ce *moat.ConfigError
	tests := []struct {
		name  string
		layer Layer
		match func(error) bool
	}{
		{"workdir under a file", Layer{WorkDir: filepath.Join(file, "nope")}, func(err error) bool { return errors.Is(err, syscall.ENOTDIR) }},
		{"unsafe workdir", Layer{WorkDir: "/"}, func(err error) bool { return errors.Is(err, moat.ErrUnsafeWorkDir) }},
		{"too few open files", Layer{Limits: Limits{OpenFiles: ptr(int64(1))}}, func(err error) bool { return errors.As(err, &ce) && ce.Field == "limits: open files" }},
		{"home that is a file", Layer{Home: file}, func(err error) bool { return errors.As(err, &place) && place.Subject == "home" }},
		{"missing socket", Layer{Sockets: []string{filepath.Join(dir, "nope")}}, func(err error) bool { return errors.Is(err, fs.ErrNotExist) }},
		{"missing grant", Layer{Grants: []moat.PathRequest{{Path: filepath.Join(dir, "nope"), Access: moat.READ}}}, func(err error) bool { return errors.Is(err, fs.ErrNotExist) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(tt.layer)
			if err == nil || !tt.match(err) {
				t.Fatalf("Build = %v (%T): the cause is lost", err, err)
			}
		})
	}
}
