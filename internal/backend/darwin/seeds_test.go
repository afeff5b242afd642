package darwin

import (
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/sbpl"
	"github.com/moat-sandbox/moat/internal/spec"
)

// Heimdall's Seatbelt cases M1-M17 (seeds-inventory §B.8.4), each as the
// profile rule that yields the expected behaviour, read by sbpl's
// reference evaluator. The same cases run for real on a macOS host in
// test/darwin (docs/platforms.md).

const (
	seedHome    = "/Users/alice"
	seedWork    = "/private/var/folders/xy/abc123/T/moat-work"
	seedTmp     = "/private/var/folders/xy/abc123/T/moat-state/tmp"
	seedHomeDir = "/private/var/folders/xy/abc123/T/moat-state/home"
)

// seedPolicy is a strict policy with a working directory in the per-user
// temp, as moat's automatic one is.
func seedPolicy() spec.Policy {
	return spec.Policy{
		ID: "seed", WorkDir: seedWork, AutoWorkDir: true,
		Private: spec.Private{Tmp: seedTmp, Home: seedHomeDir},
		View:    spec.View{Home: seedHome, Protected: []string{seedHome + "/.ssh"}},
	}
}

var seedHost = Host{
	Helper: "/usr/local/bin/moat",
	IsDir:  func(p string) bool { return !strings.Contains(path.Base(p), ".") },
}

type op struct {
	op, arg string
	want    bool
}

func checkOps(t *testing.T, p spec.Policy, h Host, ops []op) {
	t.Helper()
	prof, err := sbpl.Build(ProfileInput(p, h))
	if err != nil {
		t.Fatal(err)
	}
	r, err := sbpl.Parse(prof)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range ops {
		if got := r.Allowed(o.op, o.arg); got != o.want {
			t.Errorf("%s %q: allowed=%v, want %v", o.op, o.arg, got, o.want)
		}
	}
}

func TestSeedM1ReadsTempWorkDirThroughCanonicalAlias(t *testing.T) {
	alias := strings.TrimPrefix(seedWork, "/private")
	checkOps(t, seedPolicy(), seedHost, []op{
		{"file-read-data", alias + "/alias.txt", true},
		{"file-read-data", seedWork + "/alias.txt", true},
		{"file-read-metadata", "/var", true},
		{"file-read-metadata", "/private/var/folders", true},
	})
}

func TestSeedM2WritesTempWorkDirThroughCanonicalAlias(t *testing.T) {
	alias := strings.TrimPrefix(seedWork, "/private")
	checkOps(t, seedPolicy(), seedHost, []op{
		{"file-write-create", alias + "/new.txt", true},
		{"file-write-data", seedWork + "/new.txt", true},
		{"file-write-create", "/System/Volumes/Data" + seedWork + "/new.txt", true},
	})
}

// M3: Heimdall lets any temp directory be written (Codex parity); moat
// keeps shared temp unwritable below permissive, on purpose.
func TestSeedM3OtherTempDirsAreNotWritable(t *testing.T) {
	other := "/private/var/folders/xy/abc123/T/other/f"
	checkOps(t, seedPolicy(), seedHost, []op{
		{"file-write-create", other, false},
		{"file-write-create", "/private/tmp/f", false},
		{"file-write-create", seedTmp + "/f", true},
	})
	p := seedPolicy()
	p.Level = spec.LevelPermissive
	checkOps(t, p, seedHost, []op{{"file-write-create", other, true}}) // positive control
}

func TestSeedM4RunsIsolatedCommand(t *testing.T) {
	prof, err := sbpl.Build(ProfileInput(seedPolicy(), seedHost))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(prof.Text, "(deny default)") {
		t.Fatal("no (deny default)")
	}
	checkOps(t, seedPolicy(), seedHost, []op{
		{"process-exec", "/bin/sh", true},
		{"process-exec", "/usr/bin/printf", true},
		{"process-exec", "/usr/local/bin/moat", true},
		{"file-write-data", "/usr/local/bin/moat", false},
		{"process-fork", "", true},
	})
}

// M5: Heimdall shows the home's dotfiles; moat shows the home only at the
// default level, through the toolchain entries (or the whole home without
// ProtectUserHome), never at strict.
func TestSeedM5HomeDotfilesAtDefaultOnly(t *testing.T) {
	p := seedPolicy()
	checkOps(t, p, seedHost, []op{{"file-read-data", seedHome + "/.gitconfig", false}})
	p.Level = spec.LevelDefault
	p.View.HomeRead = []string{seedHome + "/.gitconfig"}
	checkOps(t, p, seedHost, []op{
		{"file-read-data", seedHome + "/.gitconfig", true},
		{"file-write-data", seedHome + "/.gitconfig", false},
	})
}

func TestSeedM6UnmatchedProjectFilesStayReadOnly(t *testing.T) {
	p := seedPolicy()
	p.Grants = []spec.Grant{{Path: seedHome + "/project"}}
	checkOps(t, p, seedHost, []op{
		{"file-read-data", seedHome + "/project/data.txt", true},
		{"file-write-data", seedHome + "/project/data.txt", false},
	})
}

func TestSeedM7WritableGrantsAllowEditsAndCreation(t *testing.T) {
	p := seedPolicy()
	p.Grants = []spec.Grant{{Path: seedHome + "/project/work", Write: true}}
	checkOps(t, p, seedHost, []op{
		{"file-write-create", seedHome + "/project/work/new.txt", true},
		{"file-write-data", seedHome + "/project/work/old.txt", true},
		{"process-exec", seedHome + "/project/work/new.txt", false},
		{"file-write-create", seedHome + "/project/other.txt", false},
	})
}

func TestSeedM8DenyMasksEnvFilesAndSupportsNegation(t *testing.T) {
	p := seedPolicy()
	p.FS.Deny = []string{seedWork + "/.env", seedWork + "/.env.local"}
	checkOps(t, p, seedHost, []op{
		{"file-read-data", seedWork + "/.env", false},
		{"file-read-data", seedWork + "/.env.local", false},
		{"file-write-data", seedWork + "/.env", false},
		{"file-read-data", seedWork + "/.env.example", true},
	})
}

func TestSeedM9NestedEnvPatternMatchesWorkDirRelativePaths(t *testing.T) {
	p := seedPolicy()
	p.FS.Deny = []string{seedWork + "/.env", seedWork + "/packages/api/.env.local"}
	checkOps(t, p, seedHost, []op{
		{"file-read-data", seedWork + "/packages/api/.env.local", false},
		{"file-read-data", seedWork + "/.env", false},
		{"file-read-data", seedWork + "/packages/api/.env.example", true},
		{"file-read-data", seedWork + "/packages/api/main.go", true},
	})
}

// M10-M12 are decided by package policy (fragments, which files are
// consulted); the profile enforces exactly the resolved lists: a path the
// resolution left undenied is readable, a writable one writable.
func TestSeedM10M11M12ProfileEnforcesTheResolvedLists(t *testing.T) {
	p := seedPolicy()
	p.FS.Deny = nil // the fragment's !secret.txt restored it; .pi and parent fragments are ignored
	p.Grants = []spec.Grant{{Path: seedHome + "/write.txt", Write: true}}
	checkOps(t, p, seedHost, []op{
		{"file-read-data", seedWork + "/secret.txt", true},
		{"file-write-data", seedHome + "/write.txt", true},
		{"file-write-data", seedHome + "/other.txt", false},
	})
}

func TestSeedM13WritableWorkDirProtectsControlPaths(t *testing.T) {
	p := seedPolicy()
	p.AutoWorkDir = false
	h := seedHost
	h.ControlPaths = []string{seedWork + "/.git/hooks", seedWork + "/.git/config", seedWork + "/.moat-deny"}
	if got := p.WritablePlaces(); !slices.Equal(got, []string{seedWork}) {
		t.Fatalf("writable places %q", got)
	}
	checkOps(t, p, h, []op{
		{"file-write-data", seedWork + "/regular.txt", true},
		{"file-write-create", seedWork + "/.git/hooks/pre-commit", false},
		{"file-write-data", seedWork + "/.git/config", false},
		{"file-write-unlink", seedWork + "/.git/config", false},
		{"file-write-data", seedWork + "/.moat-deny", false},
		{"file-read-data", seedWork + "/.git/config", true},
		{"file-write-data", seedWork + "/.git/index", true},
	})
}

// M14: Heimdall shows the host's file under a virtual one; moat refuses
// virtual files on macOS rather than show the wrong content.
func TestSeedM14VirtualFilesAreRefused(t *testing.T) {
	p := seedPolicy()
	p.FS.Virtual = []spec.VirtualFile{{Path: seedWork + "/virtual.txt", Content: []byte("virtual")}}
	_, missing, _ := assess(&p, facts{sandboxExec: true})
	if !slices.ContainsFunc(missing, func(m string) bool { return strings.HasPrefix(m, "virtual files:") }) {
		t.Fatalf("missing %q does not refuse virtual files", missing)
	}
}

func TestSeedM15NetworkModesControlLoopback(t *testing.T) {
	p := seedPolicy()
	checkOps(t, p, seedHost, []op{
		{"network-outbound", "127.0.0.1:8080", false},
		{"network-outbound", "localhost:8080", false},
	})
	p.HostNetwork = true
	checkOps(t, p, seedHost, []op{{"network-outbound", "127.0.0.1:8080", true}})
	p.HostNetwork = false
	p.Network.ProxyPort = 40001
	checkOps(t, p, seedHost, []op{
		{"network-outbound", "127.0.0.1:40001", true},
		{"network-outbound", "127.0.0.1:8080", false},
	})
}

// M16: the command, its environment and its descriptors reach the helper
// unchanged, and its failures come back as the shell's codes.
func TestSeedM16PreservesEnvStdioAndExitStatus(t *testing.T) {
	hs := helperSpec{Path: "/bin/sh", Args: []string{"sh", "-c", "exit 37", "é\xff"}, Env: []string{"VISIBLE=1", "ODD=\xff", "EMPTY="}, Keep: 2}
	b, err := encodeSpec(hs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeSpec(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Path != hs.Path || got.Keep != 2 || !slices.Equal(got.Env, hs.Env) || !slices.Equal(got.Args, hs.Args) {
		t.Fatalf("round trip: %+v", got)
	}
	for in, want := range map[string]status{
		"R":                       {Ready: true},
		"":                        {},
		"R127 moat: x: not found": {Ready: true, Code: 127, Msg: "moat: x: not found"},
		"R126 moat: x: denied":    {Ready: true, Code: 126, Msg: "moat: x: denied"},
		"Rgarbage":                {Ready: true, Code: 125, Msg: `sandbox helper: unreadable status "garbage"`},
	} {
		if st := parseStatus([]byte(in)); st != want {
			t.Errorf("parseStatus(%q) = %+v, want %+v", in, st, want)
		}
	}
}

// M17: signals reach the command's process group: the profile lets the
// sandbox signal itself only, and moat signals the group from outside.
func TestSeedM17SignalsStayInsideTheSandbox(t *testing.T) {
	checkOps(t, seedPolicy(), seedHost, []op{
		{"signal", "same-sandbox", true},
		{"signal", "other", false},
		{"process-info-pidinfo", "same-sandbox", true},
		{"process-info-pidinfo", "other", false},
	})
}
