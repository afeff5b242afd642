package policy

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

func ptr[T any](v T) *T { return &v }

func TestParse(t *testing.T) {
	t.Setenv("HOME", "/home/user")
	dir := filepath.Join(string(filepath.Separator), "etc", "moat")
	name := filepath.Join(dir, "moat.toml")
	tests := []struct {
		name string
		doc  string
		want Layer // Source is not compared
	}{
		{name: "empty file sets nothing", doc: "", want: Layer{}},
		{name: "comments only", doc: "# nothing\n\n", want: Layer{}},
		{
			name: "top level",
			doc: `network = "allow-list"
allow-domains = ["*.Crates.IO.", "example.com:443", "[::1]:8080"]
allow-local = ["10.1.2.3/8", "192.168.1.5", "::1"]
audit-log = "audit/net.jsonl"
audit-rotate = "daily"
isolation = "permissive"
`,
			want: Layer{
				Network:      NetworkAllowList,
				AllowDomains: []string{"*.crates.io", "example.com:443", "[::1]:8080"},
				AllowLocal:   []string{"10.0.0.0/8", "192.168.1.5/32", "::1/128"},
				AuditLog:     filepath.Join(dir, "audit", "net.jsonl"),
				AuditRotate:  RotateDaily,
				Isolation:    ptr(moat.IsolationPermissive),
			},
		},
		{
			name: "security switches",
			doc:  "[security]\nprotect-user-home = false\nprotect-credentials = true\nprotect-cloud-config = false\nprotect-browser-data = true\nprotect-keychains = false\nallow-gpu = true\n",
			want: Layer{Security: moat.SecurityOverrides{
				ProtectUserHome: ptr(false), ProtectCredentials: ptr(true), ProtectCloudConfig: ptr(false),
				ProtectBrowserData: ptr(true), ProtectKeychains: ptr(false), AllowGPU: ptr(true),
			}},
		},
		{
			name: "absent switches stay nil",
			doc:  "[security]\nallow-gpu = false\n",
			want: Layer{Security: moat.SecurityOverrides{AllowGPU: ptr(false)}},
		},
		{
			name: "grants in file order, relative to the file, home expanded",
			doc:  "[grants]\n\"/usr/share\" = \"r\"\n\"./target\" = \"rwx\"\n\"data/../cache\" = \"rw\"\n\"~/.cache/pip\" = \"xr\"\n\"~\" = \"r\"\n",
			want: Layer{Grants: []moat.PathRequest{
				{Path: "/usr/share", Access: moat.READ},
				{Path: filepath.Join(dir, "target"), Access: moat.READ | moat.WRITE | moat.EXEC},
				{Path: filepath.Join(dir, "cache"), Access: moat.READ | moat.WRITE},
				{Path: "/home/user/.cache/pip", Access: moat.READ | moat.EXEC},
				{Path: "/home/user", Access: moat.READ},
			}},
		},
		{
			name: "grants as an inline table and dotted keys",
			doc:  "grants = { \"/b\" = \"r\", \"/a\" = \"rw\" }\n",
			want: Layer{Grants: []moat.PathRequest{{Path: "/a", Access: moat.READ | moat.WRITE}, {Path: "/b", Access: moat.READ}}},
		},
		{
			name: "limits as strings",
			doc:  "[limits]\nmax-memory = \"2G\"\nmax-cpu-time = \"unlimited\"\nmax-file-size = \"1.5G\"\nmax-processes = \"64\"\nmax-open-files = \"unlimited\"\nmax-disk = \"512M\"\ntimeout = \"1m30s\"\nnice = 10\nio-priority = \"background\"\n",
			want: Layer{Limits: Limits{
				MemoryBytes: ptr[int64](2 << 30), CPUSeconds: ptr[int64](-1), FileSizeBytes: ptr[int64](3 << 29),
				Processes: ptr[int64](64), OpenFiles: ptr[int64](-1), DiskBytes: ptr[int64](512 << 20),
				Timeout: ptr(90 * time.Second), Nice: ptr(10), IOPriority: ptr(moat.IOPriorityBackground),
			}},
		},
		{
			name: "limits as integers",
			doc:  "[limits]\nmax-memory = 1_048_576\nmax-cpu-time = 60\nmax-file-size = 0\nmax-processes = 128\nmax-open-files = 256\nmax-disk = 0x1000\ntimeout = 45\nnice = 0\nio-priority = \"utility\"\n",
			want: Layer{Limits: Limits{
				MemoryBytes: ptr[int64](1 << 20), CPUSeconds: ptr[int64](60), FileSizeBytes: ptr[int64](0),
				Processes: ptr[int64](128), OpenFiles: ptr[int64](256), DiskBytes: ptr[int64](4096),
				Timeout: ptr(45 * time.Second), Nice: ptr(0), IOPriority: ptr(moat.IOPriorityUtility),
			}},
		},
		{
			name: "workdir relative to the file",
			doc:  "[workdir]\npath = \"job\"\n",
			want: Layer{WorkDir: filepath.Join(dir, "job")},
		},
		{
			name: "env passthrough then set, in file order",
			doc:  "[env]\npassthrough = [\"TERM\", \"LANG\"]\n[env.set]\nZ = \"1\"\nA = \"two words\"\n",
			want: Layer{Env: []EnvVar{{Name: "TERM"}, {Name: "LANG"}, {Name: "Z", Value: "1", Set: true}, {Name: "A", Value: "two words", Set: true}}},
		},
		{
			name: "env set inline",
			doc:  "[env]\nset = { B = \"\", A = \"x=y\" }\n",
			want: Layer{Env: []EnvVar{{Name: "A", Value: "x=y", Set: true}, {Name: "B", Set: true}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse(name, []byte(tt.doc))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if f.Name != name {
				t.Errorf("Name = %q, want %q", f.Name, name)
			}
			got := f.Layer
			got.Source = nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("layer =\n%s\nwant\n%s", show(got), show(tt.want))
			}
		})
	}
}

// show prints a layer with its pointers followed.
func show(l Layer) string {
	b, err := json.Marshal(l)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func TestParseErrors(t *testing.T) {
	t.Setenv("HOME", "/home/user")
	tests := []struct {
		name string
		doc  string
		want string // the whole message
	}{
		{name: "unknown key names file and line", doc: "network = \"deny\"\n\n# grants\n\n\n\ngrantz = 1\n", want: `config "x.toml": line 7: unknown key "grantz"`},
		{name: "unknown key in a table", doc: "[security]\nallow-gpu = true\nprotect-everything = true\n", want: `config "x.toml": line 3: unknown key "security.protect-everything"`},
		{name: "unknown table", doc: "\n[pyton]\nvenv = \"v\"\n", want: `config "x.toml": line 2: unknown key "pyton"`},
		{name: "several unknown keys", doc: "a = 1\nb = 2\n", want: `config "x.toml": line 1: unknown key "a" (and 1 more)`},
		{name: "an unknown workdir key", doc: "[workdir]\nkept = true\n", want: `config "x.toml": line 2: unknown key "workdir.kept"`},
		{name: "syntax error", doc: "network = \n", want: `config "x.toml": line 1: unexpected character U+000A at start of value`},
		{name: "key defined twice", doc: "network = \"deny\"\nnetwork = \"allow-all\"\n", want: `config "x.toml": line 2: key network is already defined`},
		{name: "value where a table belongs", doc: "security = 1\n", want: `config "x.toml": line 1: security: want a table`},
		{name: "array of tables where a table belongs", doc: "[[grants]]\n", want: `config "x.toml": line 1: grants: want a table`},
		{name: "bad network", doc: "\nnetwork = \"allow-some\"\n", want: `config "x.toml": line 2: network "allow-some": want deny, allow-all or allow-list`},
		{name: "network not a string", doc: "network = true\n", want: `config "x.toml": line 1: network: want a string, not a boolean`},
		{name: "domains not a list", doc: "allow-domains = \"example.com\"\n", want: `config "x.toml": line 1: allow-domains: want an array of strings, not a string`},
		{name: "domains holding a number", doc: "allow-domains = [\"a.com\", 1]\n", want: `config "x.toml": line 1: allow-domains: want an array of strings, not one holding an integer`},
		{name: "empty domain", doc: "allow-domains = [\"\"]\n", want: `config "x.toml": line 1: allow-domains "": empty pattern`},
		{name: "domain as URL", doc: "allow-domains = [\"https://example.com\"]\n", want: `config "x.toml": line 1: allow-domains "https://example.com": want a host, *.domain, IP address or CIDR prefix, optionally with :PORT, not a URL or path`},
		{name: "bad local", doc: "allow-local = [\"10.0.0.0/33\"]\n", want: `config "x.toml": line 1: allow-local "10.0.0.0/33": want a CIDR prefix like 10.0.0.0/8 or an IP address`},
		{name: "empty audit log", doc: "audit-log = \"\"\n", want: `config "x.toml": line 1: audit-log "": empty path`},
		{name: "bad rotation", doc: "audit-rotate = \"weekly\"\n", want: `config "x.toml": line 1: audit-rotate "weekly": want "daily"`},
		{name: "bad isolation", doc: "isolation = \"loose\"\n", want: `config "x.toml": line 1: isolation "loose": want strict, default or permissive`},
		{name: "switch not a boolean", doc: "[security]\n\nallow-gpu = \"yes\"\n", want: `config "x.toml": line 3: security.allow-gpu: want true or false, not a string`},
		{name: "bad mode names the grant's line", doc: "[grants]\n\"/usr\" = \"r\"\n\"/srv\" = \"w\"\n", want: `config "x.toml": line 3: grants "/srv": access "w": missing r; write it as rw`},
		{name: "unknown letter", doc: "[grants]\n\"/srv\" = \"RW\"\n", want: `config "x.toml": line 2: grants "/srv": access "RW": unknown letter 'R'; want r, rw, rx or rwx`},
		{name: "empty mode", doc: "[grants]\n\"/srv\" = \"\"\n", want: `config "x.toml": line 2: grants "/srv": access "": empty; want r, rw, rx or rwx`},
		{name: "mode not a string", doc: "[grants]\n\"/srv\" = 7\n", want: `config "x.toml": line 2: grants "/srv": want a mode r, rw, rx or rwx, not an integer`},
		{name: "unquoted dotted path", doc: "[grants]\nsrc.d = \"r\"\n", want: `config "x.toml": line 2: grants "src": want a mode r, rw, rx or rwx, not a table; quote a path that holds a dot, like "./target"`},
		{name: "empty grant path", doc: "[grants]\n\"\" = \"r\"\n", want: `config "x.toml": line 2: grants "": empty path`},
		{name: "other user's home", doc: "[grants]\n\"~root/x\" = \"r\"\n", want: `config "x.toml": line 2: grants "~root/x": only ~/ is expanded; write ~user's home as an absolute path`},
		{name: "negative size", doc: "[limits]\nmax-memory = -1\n", want: `config "x.toml": line 2: limits.max-memory -1: negative; want a size like 512M, a number of bytes, or "unlimited"`},
		{name: "bad size", doc: "[limits]\nmax-disk = \"12X\"\n", want: `config "x.toml": line 2: limits.max-disk "12X": want a size like 512M or 2G`},
		{name: "float size", doc: "[limits]\nmax-file-size = 1.5\n", want: `config "x.toml": line 2: limits.max-file-size: want a size like 1G, a number of bytes, or "unlimited", not a float`},
		{name: "bad count", doc: "[limits]\nmax-processes = \"many\"\n", want: `config "x.toml": line 2: limits.max-processes "many": want a whole number or "unlimited"`},
		{name: "bad timeout", doc: "[limits]\ntimeout = \"soon\"\n", want: `config "x.toml": line 2: limits.timeout "soon": want a duration like 30s or 2m`},
		{name: "negative timeout", doc: "[limits]\ntimeout = -5\n", want: `config "x.toml": line 2: limits.timeout -5: want a duration like "30s", or whole seconds`},
		{name: "nice too high", doc: "[limits]\nnice = 20\n", want: `config "x.toml": line 2: limits.nice 20: want 0 (unchanged) through 19; priority can only be lowered`},
		{name: "nice as a string", doc: "[limits]\nnice = \"5\"\n", want: `config "x.toml": line 2: limits.nice: want 0 (unchanged) through 19; priority can only be lowered, not a string`},
		{name: "bad io priority", doc: "[limits]\nio-priority = \"fast\"\n", want: `config "x.toml": line 2: limits.io-priority "fast": want utility or background`},
		{name: "workdir not a string", doc: "[workdir]\npath = [\"a\"]\n", want: `config "x.toml": line 2: workdir.path: want a string, not an array`},
		{name: "bad passthrough name", doc: "[env]\npassthrough = [\"A-B\"]\n", want: `config "x.toml": line 2: env.passthrough "A-B": "A-B" is not a valid variable name (letters, digits and _, not starting with a digit)`},
		{name: "loader variable", doc: "[env.set]\nLD_PRELOAD = \"/x.so\"\n", want: `config "x.toml": line 2: env.set "LD_PRELOAD": LD_* variables are never passed to the sandbox`},
		{name: "set value not a string", doc: "[env]\nset = { A = 1 }\n", want: `config "x.toml": line 2: env.set "A": want a string, not an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("x.toml", []byte(tt.doc))
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tt.want {
				t.Errorf("error\n%s\nwant\n%s", err, tt.want)
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.File != "x.toml" {
				t.Errorf("error %#v is not an *Error for x.toml", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error has more than one line")
			}
		})
	}
}

func TestParseHome(t *testing.T) {
	t.Setenv("HOME", "")
	_, err := Parse("x.toml", []byte("[grants]\n\"~/x\" = \"r\"\n"))
	if want := `config "x.toml": line 2: grants "~/x": ~ needs $HOME set to an absolute path`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "moat.toml")
	if err := os.WriteFile(path, []byte("[grants]\n\"src\" = \"r\"\n[workdir]\npath = \"../job\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := []moat.PathRequest{{Path: filepath.Join(dir, "src"), Access: moat.READ}}; !reflect.DeepEqual(f.Grants, want) {
		t.Errorf("grants %v, want %v: relative to the file", f.Grants, want)
	}
	if want := filepath.Join(filepath.Dir(dir), "job"); f.WorkDir != want {
		t.Errorf("workdir %q, want %q", f.WorkDir, want)
	}

	t.Run("relative name", func(t *testing.T) {
		t.Chdir(filepath.Dir(dir))
		f, err := Load(filepath.Join(filepath.Base(dir), "moat.toml"))
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(dir, "src"); f.Grants[0].Path != want {
			t.Errorf("grant %q, want %q", f.Grants[0].Path, want)
		}
	})

	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, []byte(strings.Repeat("#\n", maxFileSize)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, want string
		is               error
	}{
		{"missing", filepath.Join(dir, "none.toml"), "no such file or directory", fs.ErrNotExist},
		{"directory", dir, "is a directory", nil},
		{"too large", big, "larger than 256 KiB", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.path)
			want := `config "` + tc.path + `": ` + tc.want
			if err == nil || err.Error() != want {
				t.Fatalf("error %v, want %s", err, want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.is)
			}
		})
	}
}
