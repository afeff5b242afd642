package sbpl

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/golden"
)

const (
	home = "/Users/alice"
	work = "/Users/alice/proj"
	tmp  = "/private/var/folders/xy/abc/T/moat-1/tmp"
	hom  = "/private/var/folders/xy/abc/T/moat-1/home"
)

// goldenInputs are the profiles kept in testdata, one per shape of policy.
var goldenInputs = map[string]Input{
	"strict": {
		WorkDir: work, Private: []string{tmp, hom}, Home: home,
		Protected: []string{home + "/.ssh", home + "/.aws"},
		Helper:    "/usr/local/bin/moat", TTYIoctl: true,
	},
	"default": {
		Level: LevelDefault, WorkDir: work, Private: []string{tmp, hom}, Home: home,
		HomeRead:   []string{home + "/.cargo", home + "/.rustup"},
		SharedTemp: []string{"/private/tmp/readme.txt"},
		Protected:  []string{home + "/.ssh", home + "/.cargo/credentials.toml"},
		ReadOnly:   []string{work + "/.git/hooks", work + "/.git/config"},
		Grants:     []Grant{{Path: "/Users/alice/data", Dir: true}, {Path: "/Users/alice/out", Write: true, Dir: true}},
		Helper:     "/usr/local/bin/moat", ProxyPort: 41234,
	},
	"permissive": {
		Level: LevelPermissive, WorkDir: work, Private: []string{tmp, hom}, Home: home,
		HideHome: home, HomeRead: []string{home + "/.cargo"},
		Protected: []string{home + "/.ssh"}, AllowTCCPrompts: true,
		Helper: "/usr/local/bin/moat", HostNetwork: true,
	},
	"build": {
		WorkDir: work, ExecWorkDir: true, Private: []string{tmp, hom},
		Scratch: []string{"/private/var/folders/xy/abc/T/moat-1/gotmp"},
		Grants: []Grant{
			{Path: "/Users/alice/target", Write: true, Exec: true, Dir: true},
			{Path: "/Users/alice/tool.sh", Exec: true},
			{Path: "/Users/alice/cache", Write: true, Dir: true},
		},
		Deny:    []string{"/Users/alice/target/secrets"},
		Seal:    []Seal{{Dir: work + "/conf", Keep: []string{work + "/conf/app.toml"}}},
		Sockets: []string{"/private/tmp/agent.sock"}, Terminals: []string{"/dev/ttys003"},
		Helper: "/usr/local/bin/moat", AllowGPU: true, AllowNPU: true, AllowHardware: true,
	},
	"hostile": {
		WorkDir:   "/Users/a \"b\" \\c (d) ;e\nf #\"g\" [h].*+?{i}|^$",
		Grants:    []Grant{{Path: "/Volumes/x\")(allow default)(\"", Write: true, Dir: true}},
		Protected: []string{"/Users/a \"b\" \\c (d) ;e\nf #\"g\" [h].*+?{i}|^$/.ssh"},
	},
}

// TestGolden compares each profile with its golden file (go test -update
// rewrites them) and checks that the text parses, names only parameters
// it defines, and defines only those it names.
func TestGolden(t *testing.T) {
	for name, in := range goldenInputs {
		t.Run(name, func(t *testing.T) {
			p, err := Build(in)
			if err != nil {
				t.Fatal(err)
			}
			got := render(p)
			file := filepath.Join("testdata", name+".sbpl")
			golden.Check(t, file, got)
			if _, err := Parse(p); err != nil {
				t.Fatal(err)
			}
			for _, kv := range p.Params {
				if !strings.Contains(p.Text, `(param "`+kv.Key+`")`) {
					t.Errorf("parameter %s is defined but never named", kv.Key)
				}
			}
		})
	}
}

// render is a profile as its golden file keeps it: the text, then each
// parameter quoted as Go would, so a hostile value stays on one line.
func render(p Profile) string {
	var b strings.Builder
	b.WriteString(p.Text)
	b.WriteString("\n;; parameters\n")
	for _, kv := range p.Params {
		b.WriteString(";; -D " + kv.Key + "=" + strconv.Quote(kv.Value) + "\n")
	}
	return b.String()
}

// TestTextHoldsNoPolicyPath checks that no path of the policy appears in
// the text, for every golden input: paths travel as parameters only.
func TestTextHoldsNoPolicyPath(t *testing.T) {
	for name, in := range goldenInputs {
		p, err := Build(in)
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range p.Params {
			if strings.Contains(p.Text, `"`+kv.Value+`"`) && !isConstantPath(kv.Value) {
				t.Errorf("%s: text holds path %q", name, kv.Value)
			}
		}
	}
}

// isConstantPath reports whether p is one of the package's own constant
// paths, which the text may name too.
func isConstantPath(p string) bool {
	for _, list := range [][]string{systemExec, userDataRoots, SharedTempDirs, readDevices} {
		for _, c := range list {
			for _, a := range Aliases(c) {
				if p == a {
					return true
				}
			}
		}
	}
	return false
}

// probe is one operation and whether the profile must allow it.
type probe struct {
	op, arg string
	want    bool
}

func runProbes(t *testing.T, in Input, probes []probe) {
	t.Helper()
	p, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range probes {
		if got := r.Allowed(pr.op, pr.arg); got != pr.want {
			t.Errorf("%s %q: allowed=%v, want %v", pr.op, pr.arg, got, pr.want)
		}
	}
}

// TestGuarantees checks each guarantee of the profile as the reference
// evaluator reads it, with a positive control beside every denial.
func TestGuarantees(t *testing.T) {
	strict := goldenInputs["strict"]
	cases := []struct {
		name   string
		in     Input
		probes []probe
	}{
		{"the working directory is writable, not executable", strict, []probe{
			{"file-write-create", work + "/new.txt", true},
			{"file-read-data", work + "/a.py", true},
			{"process-exec", work + "/a.out", false},
			{"file-map-executable", work + "/lib.dylib", false},
			{"process-exec", "/usr/bin/python3", true},
			{"file-link", work + "/hard", false},
			{"file-clone", work + "/clone", false},
		}},
		{"nothing else is writable", strict, []probe{
			{"file-write-data", home + "/.zshrc", false},
			{"file-write-create", "/usr/local/bin/evil", false},
			{"file-write-create", "/private/tmp/x", false},
			{"file-write-data", tmp + "/x", true},
			{"file-write-data", hom + "/.cache/x", true},
		}},
		{"private directories are not executable", strict, []probe{
			{"process-exec", tmp + "/payload", false},
			{"file-map-executable", hom + "/x.so", false},
		}},
		{"strict denies user data and shared temp", strict, []probe{
			{"file-read-data", "/Users/bob/notes.txt", false},
			{"file-read-data", "/Volumes/USB/a", false},
			{"file-read-data", "/Network/Servers/x", false},
			{"file-read-data", "/home/x", false},
			{"file-read-data", "/private/var/root/.profile", false},
			{"file-read-data", "/private/tmp/other", false},
			{"file-read-data", "/tmp/other", false},
			{"file-read-data", "/private/var/folders/zz/other", false},
			{"file-read-data", "/System/Volumes/Data/Users/bob/notes.txt", false},
			{"file-read-data", "/usr/lib/libSystem.B.dylib", true},
			{"file-read-data", "/private/etc/hosts", true},
		}},
		{"protections deny every form", strict, []probe{
			{"file-read-data", home + "/.ssh/id_ed25519", false},
			{"file-read-metadata", home + "/.ssh", false},
			{"file-read-data", "/System/Volumes/Data" + home + "/.ssh/id_ed25519", false},
			{"file-link", home + "/.ssh/id_ed25519", false},
			{"file-clone", home + "/.aws/credentials", false},
		}},
		{"the path to the working directory resolves", strict, []probe{
			{"file-read-metadata", "/Users", true},
			{"file-read-metadata", home, true},
			{"file-read-data", home, false},
			{"file-read-metadata", "/Users/bob", false},
		}},
		{"base services and sysctls", strict, []probe{
			{"mach-lookup", "com.apple.system.opendirectoryd.libinfo", true},
			{"mach-lookup", "com.apple.SecurityServer", false},
			{"mach-lookup", "com.apple.trustd", false},
			{"sysctl-read", "hw.ncpu", true},
			{"sysctl-read", "hw.optional.arm.FEAT_LSE", true},
			{"sysctl-read", "kern.procargs2", false},
			{"sysctl-read", "kern.proc.all", false},
			{"signal", "same-sandbox", true},
			{"process-fork", "", true},
		}},
		{"devices", strict, []probe{
			{"file-write-data", "/dev/null", true},
			{"file-read-data", "/dev/urandom", true},
			{"file-read-data", "/dev/rdisk0", false},
			{"file-read-data", "/dev/ttys001", false},
			{"file-read-data", "/dev/ptmx", false},
			{"file-read-data", "/dev/cu.usbserial", false},
			{"iokit-open", "IOAccelerator", false},
		}},
		{"deny-all has no network, loopback included", strict, []probe{
			{"network-outbound", "127.0.0.1:8080", false},
			{"network-outbound", "93.184.216.34:443", false},
			{"network-bind", "127.0.0.1:8080", false},
			{"network-outbound", "/private/var/run/mDNSResponder", false},
			{"network-bind", tmp + "/s.sock", true},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runProbes(t, c.in, c.probes) })
	}
}

// TestGrantsAndProtections checks the order of the contested paths: an
// explicit grant of a protected path, or of one inside it, wins; a
// protection inside a granted directory wins over the grant.
func TestGrantsAndProtections(t *testing.T) {
	in := Input{
		WorkDir: work, Home: home, Level: LevelDefault,
		Protected: []string{home + "/.ssh", home + "/.config/gh"},
		Grants: []Grant{
			{Path: home + "/.ssh/known_hosts"},
			{Path: home + "/.config", Write: true, Dir: true},
		},
	}
	runProbes(t, in, []probe{
		{"file-read-data", home + "/.ssh/known_hosts", true},
		{"file-write-data", home + "/.ssh/known_hosts", false},
		{"file-read-data", home + "/.ssh/id_rsa", false},
		{"file-read-metadata", home + "/.ssh", true}, // to resolve the grant
		{"file-read-data", home + "/.config/gh/hosts.yml", false},
		{"file-write-data", home + "/.config/gh/hosts.yml", false},
		{"file-write-data", home + "/.config/nvim/init.lua", true},
		{"process-exec", home + "/.config/nvim/run.sh", false},
	})
}

// TestWriteXorExec checks that rwx grants, and only they, run what is
// writable, and that a read-execute grant inside a writable place does not.
func TestWriteXorExec(t *testing.T) {
	in := Input{
		WorkDir: work, Private: []string{tmp},
		Grants: []Grant{
			{Path: "/Users/alice/target", Write: true, Exec: true, Dir: true},
			{Path: work + "/bin", Exec: true, Dir: true},
			{Path: "/Users/alice/tools", Exec: true, Dir: true},
			{Path: "/Users/alice/out", Write: true, Dir: true},
		},
		Deny: []string{"/Users/alice/target/keys"},
	}
	runProbes(t, in, []probe{
		{"process-exec", "/Users/alice/target/debug/app", true},
		{"file-write-create", "/Users/alice/target/debug/app", true},
		{"process-exec", "/Users/alice/target/keys/k", false},
		{"process-exec", work + "/bin/tool", false},
		{"process-exec", "/Users/alice/tools/fmt", true},
		{"file-write-data", "/Users/alice/tools/fmt", false},
		{"process-exec", "/Users/alice/out/a.out", false},
		{"process-exec", tmp + "/a.out", false},
	})
	in.ExecWorkDir = true
	runProbes(t, in, []probe{{"process-exec", work + "/a.out", true}})
}

// TestLevels checks what each level adds.
func TestLevels(t *testing.T) {
	def := goldenInputs["default"]
	runProbes(t, def, []probe{
		{"file-read-data", "/private/tmp/readme.txt", true},
		{"file-read-data", "/tmp/readme.txt", true},
		{"file-write-data", "/private/tmp/readme.txt", false},
		{"file-read-data", "/private/tmp/other.txt", false},
		{"file-read-data", home + "/.cargo/bin/cargo", true},
		{"process-exec", home + "/.cargo/bin/cargo", true},
		{"file-write-data", home + "/.cargo/bin/cargo", false},
		{"file-read-data", home + "/.cargo/credentials.toml", false},
		{"file-read-data", home + "/notes.txt", false},
		{"file-write-data", work + "/.git/hooks/pre-commit", false},
		{"file-write-data", work + "/.git/config", false},
		{"file-write-data", work + "/main.go", true},
		{"file-write-data", "/Users/alice/data/x", false},
		{"file-read-data", "/Users/alice/data/x", true},
		{"file-write-data", "/Users/alice/out/x", true},
		{"network-outbound", "127.0.0.1:41234", true},
		{"network-outbound", "localhost:41234", true},
		{"network-outbound", "127.0.0.1:41235", false},
		{"network-outbound", "10.0.0.1:41234", false},
		{"mach-lookup", "com.apple.trustd", true},
		{"file-read-data", home + "/Documents/a.pdf", false},
	})
	perm := goldenInputs["permissive"]
	runProbes(t, perm, []probe{
		{"file-write-data", "/Users/bob/x", true},
		{"file-read-data", "/Volumes/USB/a", true},
		{"file-read-data", home + "/notes.txt", false},
		{"file-read-data", home + "/.cargo/bin/cargo", true},
		{"file-read-data", home + "/.ssh/id_rsa", false},
		{"process-exec", "/private/tmp/payload", false},
		{"process-exec", "/Users/bob/bin/tool", true},
		{"file-write-data", "/private/tmp/x", true},
		{"network-outbound", "93.184.216.34:443", true},
		{"file-read-data", "/dev/rdisk0", false},
	})
}

// TestConsentFolders checks that without AllowTCCPrompts the folders macOS
// would prompt for are denied even where the level shows the home.
func TestConsentFolders(t *testing.T) {
	in := Input{Level: LevelDefault, WorkDir: work, Home: home, HomeRead: []string{home}}
	runProbes(t, in, []probe{
		{"file-read-data", home + "/Documents/tax.pdf", false},
		{"file-read-data", home + "/Library/Mail/x", false},
		{"file-read-data", home + "/Desktop", false},
		{"file-read-data", home + "/.gitconfig", true},
	})
	in.AllowTCCPrompts = true
	runProbes(t, in, []probe{{"file-read-data", home + "/Documents/tax.pdf", true}})
}

// TestSeal checks that only a sealed directory's entries that existed at
// start stay reachable.
func TestSeal(t *testing.T) {
	in := goldenInputs["build"]
	runProbes(t, in, []probe{
		{"file-read-data", work + "/conf/app.toml", true},
		{"file-write-data", work + "/conf/app.toml", true},
		{"file-read-data", work + "/conf/new.toml", false},
		{"file-write-create", work + "/conf/new.toml", false},
		{"file-read-data", work + "/conf", true},
		{"file-write-create", work + "/other.toml", true},
	})
}

// TestHardware checks the switches' device access, each off by default.
func TestHardware(t *testing.T) {
	in := goldenInputs["build"]
	runProbes(t, in, []probe{
		{"iokit-open", "AGXDeviceUserClient", true},
		{"iokit-open", "H11ANEInUserClient", true},
		{"iokit-open", "IOUSBDeviceUserClientV2", true},
		{"file-read-data", "/dev/cu.usbserial-1", true},
		{"file-read-data", "/dev/ttys003", true},
		{"file-ioctl", "/dev/ttys003", false},
		{"file-read-data", "/dev/ttys004", false},
		{"network-outbound", "/private/tmp/agent.sock", true},
		{"network-outbound", "/private/tmp/other.sock", false},
	})
	in.AllowHardware, in.AllowNPU = false, false
	runProbes(t, in, []probe{
		{"iokit-open", "AGXDeviceUserClient", true},
		{"iokit-open", "H11ANEInUserClient", false},
		{"iokit-open", "IOUSBDeviceUserClientV2", false},
		{"file-read-data", "/dev/cu.usbserial-1", false},
	})
}

// TestHelper checks that moat's helper runs from anywhere but can never be
// changed by the sandbox, even in a writable place.
func TestHelper(t *testing.T) {
	in := Input{WorkDir: work, Helper: work + "/bin/moat", Level: LevelPermissive}
	runProbes(t, in, []probe{
		{"process-exec", work + "/bin/moat", true},
		{"file-write-data", work + "/bin/moat", false},
		{"file-write-unlink", work + "/bin/moat", false},
		{"file-link", work + "/bin/moat", false},
		{"file-write-data", work + "/bin/other", true},
	})
}

// TestHostilePaths checks names that would break a profile written with
// inline strings or regexes: each is matched exactly, as bytes, and the
// text holds none of it.
func TestHostilePaths(t *testing.T) {
	names := []string{
		`/w/quote"d`, `/w/back\slash`, `/w/trailing\`, `/w/(paren)`, "/w/new\nline", `/w/semi;colon`,
		`/w/#"regex"`, `/w/dot.star*`, `/w/[class]`, `/w/a+b?c`, `/w/^anchor$`, `/w/{1,2}|x`,
		`/w/")(allow default)("`, "/w/tab\there", "/w/ünïcödé", `/w/ space `,
	}
	for _, n := range names {
		t.Run(strconv.Quote(n), func(t *testing.T) {
			in := Input{WorkDir: "/work", Grants: []Grant{{Path: n, Write: true, Dir: true}}, Protected: []string{n + "/secret"}}
			p, err := Build(in)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(p.Text, n) {
				t.Fatalf("text holds the path")
			}
			if strings.Contains(p.Text, "(allow default)") {
				t.Fatalf("text holds an injected rule")
			}
			r, err := Parse(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, pr := range []probe{
				{"file-write-data", n + "/f", true},
				{"file-read-data", n + "/secret/k", false},
				{"file-write-data", strings.ReplaceAll(n, ".", "X") + "X/f", false},
				{"file-write-data", "/w/other", false},
				{"process-exec", "/w/other", false},
			} {
				if pr.arg == n+"X/f" {
					continue
				}
				if got := r.Allowed(pr.op, pr.arg); got != pr.want {
					t.Errorf("%s %q: allowed=%v, want %v", pr.op, pr.arg, got, pr.want)
				}
			}
		})
	}
}

// TestRefusedPaths checks the paths Build cannot name exactly.
func TestRefusedPaths(t *testing.T) {
	bad := []string{"", "relative", "/a/../b", "/a/", "/a//b", "/nul\x00byte", "/bad\xffutf8", "/bad\xc3"}
	for _, p := range bad {
		for field, in := range map[string]Input{
			"workdir":   {WorkDir: p},
			"grant":     {WorkDir: "/w", Grants: []Grant{{Path: p}}},
			"protected": {WorkDir: "/w", Protected: []string{p}},
			"socket":    {WorkDir: "/w", Sockets: []string{p}},
			"helper":    {WorkDir: "/w", Helper: p},
		} {
			if field == "helper" && p == "" {
				continue // no helper
			}
			if _, err := Build(in); err == nil {
				t.Errorf("%s %q: accepted", field, p)
			} else if !strings.HasPrefix(err.Error(), "sbpl: ") {
				t.Errorf("%s %q: error %q lacks the prefix", field, p, err)
			}
		}
	}
	if _, err := Build(Input{WorkDir: "/w", ProxyPort: 70000}); err == nil {
		t.Error("port 70000 accepted")
	}
	if _, err := Build(Input{WorkDir: "/w", Seal: []Seal{{Dir: "/w/s", Keep: []string{"/w/t"}}}}); err == nil {
		t.Error("a kept entry outside its sealed directory was accepted")
	}
}

// TestAliases checks every form a path is named by.
func TestAliases(t *testing.T) {
	cases := map[string][]string{
		"/tmp/x":                         {"/tmp/x", dataVolume + "/tmp/x", "/private/tmp/x", dataVolume + "/private/tmp/x"},
		"/private/var/folders/a":         {"/private/var/folders/a", dataVolume + "/private/var/folders/a", "/var/folders/a", dataVolume + "/var/folders/a"},
		"/Users/a":                       {"/Users/a", dataVolume + "/Users/a"},
		"/System/Library":                {"/System/Library"},
		"/System/Volumes/Data/Users/a":   {"/System/Volumes/Data/Users/a", "/Users/a"},
		"/dev/null":                      {"/dev/null"},
		"/etc/hosts":                     {"/etc/hosts", dataVolume + "/etc/hosts", "/private/etc/hosts", dataVolume + "/private/etc/hosts"},
		"/variable":                      {"/variable", dataVolume + "/variable"},
		"/System/Volumes/Database/thing": {"/System/Volumes/Database/thing"},
	}
	for in, want := range cases {
		got := Aliases(in)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("Aliases(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestQuote checks SBPL string escaping against the parser's reading.
func TestQuote(t *testing.T) {
	for _, s := range []string{"", "plain", `a"b`, `a\b`, `\`, `"`, `\"`, "ünï", "a;b", "a)(b"} {
		q, err := Quote(s)
		if err != nil {
			t.Fatalf("Quote(%q): %v", s, err)
		}
		back, n, err := readString(q, true)
		if err != nil || n != len(q) || back != s {
			t.Errorf("Quote(%q) = %s reads back as %q (%d of %d bytes, %v)", s, q, back, n, len(q), err)
		}
	}
	for _, s := range []string{"new\nline", "nul\x00", "bell\a", "\xff", "del\x7f"} {
		if _, err := Quote(s); err == nil {
			t.Errorf("Quote(%q) accepted", s)
		}
	}
}

// TestParseRefuses checks that the checker refuses what sandbox-exec
// would, or what the generator must never write.
func TestParseRefuses(t *testing.T) {
	cases := map[string]Profile{
		"unbalanced":      {Text: "(version 1)\n(deny default"},
		"extra paren":     {Text: "(version 1))"},
		"no version":      {Text: "(deny default)"},
		"unknown op":      {Text: "(version 1)(allow file-reed*)"},
		"unknown filter":  {Text: "(version 1)(allow file-read* (subpathx \"/a\"))"},
		"undefined param": {Text: "(version 1)(allow file-read* (subpath (param \"NOPE\")))"},
		"bad string":      {Text: "(version 1)(allow file-read* (subpath \"/a))"},
		"bad regex":       {Text: "(version 1)(allow file-read* (regex #\"(\"))"},
		"dup param":       {Text: "(version 1)", Params: []Param{{"A", "/a"}, {"A", "/b"}}},
	}
	for name, p := range cases {
		if _, err := Parse(p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzBuild builds profiles around arbitrary path names: either Build
// refuses the name, or the profile parses, its text holds no copy of the
// name, and the name is matched exactly.
func FuzzBuild(f *testing.F) {
	for _, s := range []string{"plain", `q"uote`, `b\ack`, "(p)", "n\nl", ".*", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		p := "/fz/" + name
		in := Input{WorkDir: "/work", Grants: []Grant{{Path: p, Write: true, Dir: true}}}
		prof, err := Build(in)
		if err != nil {
			if CheckPath(p) == nil {
				t.Fatalf("Build refused %q, which CheckPath accepts: %v", p, err)
			}
			return
		}
		if len(name) > 3 && strings.Contains(prof.Text, name) {
			t.Fatalf("text holds %q", name)
		}
		r, err := Parse(prof)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Allowed("file-write-data", p) {
			t.Fatalf("grant %q not writable", p)
		}
		if r.Allowed("file-write-data", "/fz/other-than-the-grant") && !under("/fz/other-than-the-grant", p) {
			t.Fatalf("grant %q leaks to a sibling", p)
		}
	})
}

// FuzzParse feeds arbitrary text to the checker, which must not panic.
func FuzzParse(f *testing.F) {
	p, _ := Build(goldenInputs["default"])
	f.Add(p.Text)
	f.Add("(version 1)(allow file-read* (require-all (subpath \"/a\") (require-not (literal \"/a\"))))")
	f.Fuzz(func(t *testing.T, text string) {
		r, err := Parse(Profile{Text: text})
		if err == nil {
			r.Allowed("file-read-data", "/a/b")
			r.Allowed("network-outbound", "127.0.0.1:1")
		}
	})
}
