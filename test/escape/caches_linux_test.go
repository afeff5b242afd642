//go:build linux

package escape_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Kept caches (Config.KeepCaches, on at the command line with --workdir):
// only the home's cache directories survive a run, per project and
// policy. These tests run the command line as users do, each with its own
// XDG_CACHE_HOME and XDG_STATE_HOME.

// cacheSetup returns the environment that places this test's stores and
// state, the stores' root, and a Go module to build in a fresh working
// directory.
func cacheSetup(t *testing.T) (env []string, root, work string) {
	t.Helper()
	return cacheSetupIn(t, t.TempDir())
}

// cacheSetupIn is cacheSetup in the directory d.
func cacheSetupIn(t *testing.T, d string) (env []string, root, work string) {
	t.Helper()
	env = []string{"XDG_CACHE_HOME=" + filepath.Join(d, "cache"), "XDG_STATE_HOME=" + filepath.Join(d, "state")}
	root = filepath.Join(d, "cache", "moat", "homes")
	work = filepath.Join(d, "work")
	if err := os.Mkdir(work, 0o700); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"go.mod":       "module hello\n\ngo 1.22\n",
		"main.go":      "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(greeting()) }\n\nfunc greeting() string { return \"hi\" }\n",
		"main_test.go": "package main\n\nimport \"testing\"\n\nfunc TestGreeting(t *testing.T) {\n\tif greeting() != \"hi\" {\n\t\tt.Fatal(greeting())\n\t}\n}\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return env, root, work
}

// stores lists the store directories under root.
func stores(t *testing.T, root string) []string {
	t.Helper()
	ents, err := os.ReadDir(root)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

func mustRun(t *testing.T, env []string, args ...string) result {
	t.Helper()
	r := moatCLI(t, "/", env, args...)
	if r.Code != 0 {
		t.Fatalf("moat %s: %s", strings.Join(args, " "), r)
	}
	return r
}

// TestKeptCachesGoBuildAndTest: the second go build of a module compiles
// nothing of the standard library, and the second go test is a cache hit;
// the first run of each is the control.
func TestKeptCachesGoBuildAndTest(t *testing.T) {
	t.Parallel()
	need(t, "go")
	env, root, work := cacheSetup(t)
	build := []string{"run", "--workdir", work, "--", "sh", "-c", `go build -x -o "$TMPDIR/app" . 2>&1`}
	first := mustRun(t, env, build...)
	if !strings.Contains(first.Stdout, " -p fmt ") {
		t.Fatalf("control: the first build did not compile fmt, so a cache hit shows nothing: %s", first)
	}
	second := mustRun(t, env, build...)
	if strings.Contains(second.Stdout, " -p fmt ") {
		t.Fatalf("the second build compiled fmt again: the build cache did not survive: %s", second)
	}
	test := []string{"run", "--build", "--workdir", work, "--", "go", "test", "."}
	first = mustRun(t, env, test...)
	if strings.Contains(first.Stdout, "(cached)") || !strings.Contains(first.Stdout, "ok") {
		t.Fatalf("control: the first go test was cached or failed: %s", first)
	}
	second = mustRun(t, env, test...)
	if !strings.Contains(second.Stdout, "(cached)") {
		t.Fatalf("the second go test was not a cache hit: %s", second)
	}
	if n := len(stores(t, root)); n != 2 {
		t.Fatalf("%d stores, want 2: go build's and go test --build's (another policy)", n)
	}
}

// keptCacheFiles are files in each kept cache directory: they survive.
var keptCacheFiles = []string{".cache/go-build/m", "go/pkg/mod/m", ".npm/_cacache/m", ".cache/pip/m", ".cargo/registry/m"}

// plantedFiles are config and start-up files a run could plant for a
// later one, and home entries beside the caches: none survives.
var plantedFiles = []string{".gitconfig", ".npmrc", ".bashrc", ".profile", ".config/pip/pip.conf", ".config/git/config",
	".cargo/config.toml", ".cargo/config", ".cargo/git/m", ".cache/other/m", ".npm/m", "go/bin/m", ".pip/pip.conf"}

// TestKeptCachesPlantedConfigDoesNotPersist: a run plants config files
// and writes into every cache directory; the next run of the same project
// and policy finds the caches' files (the control) and none of the rest.
func TestKeptCachesPlantedConfigDoesNotPersist(t *testing.T) {
	t.Parallel()
	env, _, work := cacheSetup(t)
	var plant, probe strings.Builder
	for _, f := range append(append([]string(nil), keptCacheFiles...), plantedFiles...) {
		plant.WriteString(`mkdir -p "$(dirname ~/` + f + `)" && echo planted > ~/` + f + " || exit 9\n")
		probe.WriteString(`if [ -e ~/` + f + ` ]; then echo "present ` + f + `"; else echo "absent ` + f + `"; fi` + "\n")
	}
	mustRun(t, env, "run", "--workdir", work, "--", "sh", "-c", plant.String())
	r := mustRun(t, env, "run", "--workdir", work, "--", "sh", "-c", probe.String())
	for _, f := range keptCacheFiles {
		if !strings.Contains(r.Stdout, "present "+f+"\n") {
			t.Errorf("control: %s did not survive: %s", f, r.Stdout)
		}
	}
	for _, f := range plantedFiles {
		if !strings.Contains(r.Stdout, "absent "+f+"\n") {
			t.Errorf("%s survived into the next run: %s", f, r.Stdout)
		}
	}
}

// TestKeptCachesPolicyApart: a run with another policy (a token in its
// environment, a wider network, another level, build mode, a grant)
// never sees the caches of the first; one with the same policy does.
func TestKeptCachesPolicyApart(t *testing.T) {
	t.Parallel()
	env, root, work := cacheSetup(t)
	extra := t.TempDir()
	mustRun(t, env, "run", "--workdir", work, "--", "sh", "-c", "echo first > ~/.cache/go-build/m")
	mustRun(t, env, "run", "--workdir", work, "--env", "TOKEN=x", "--", "sh", "-c", "echo token > ~/.cache/go-build/t")
	probe := `cat ~/.cache/go-build/m 2>/dev/null || echo none; cat ~/.cache/go-build/t 2>/dev/null || echo none`
	cases := []struct {
		name  string
		flags []string
		want  string
	}{
		{"same policy (control)", nil, "first\nnone\n"},
		{"same token (control)", []string{"--env", "TOKEN=x"}, "none\ntoken\n"},
		{"a token added", []string{"--env", "TOKEN=y"}, "none\nnone\n"},
		{"a domain allowed", []string{"--network", "allow-list", "--allow-domain", "example.com"}, "none\nnone\n"},
		{"another isolation level", []string{"--isolation", "strict"}, "none\nnone\n"},
		{"build mode", []string{"--build"}, "none\nnone\n"},
		{"a grant", []string{"--readable", extra}, "none\nnone\n"},
	}
	for _, c := range cases {
		args := append(append([]string{"run", "--workdir", work}, c.flags...), "--", "sh", "-c", probe)
		r := mustRun(t, env, args...)
		if r.Stdout != c.want {
			t.Errorf("%s: got %q, want %q", c.name, r.Stdout, c.want)
		}
	}
	// Two policies from the start, then one per other case.
	if n := len(stores(t, root)); n != 2+len(cases)-2 {
		t.Errorf("%d stores, want %d", n, 2+len(cases)-2)
	}
}

// TestKeptCachesNeedNamedWorkdir: without --workdir, or with
// --fresh-home, the home is throwaway and no store is made; --fresh-home
// with --home is a usage error.
func TestKeptCachesNeedNamedWorkdir(t *testing.T) {
	t.Parallel()
	env, root, work := cacheSetup(t)
	probe := "readlink ~/.cache/go-build >/dev/null && echo linked || echo throwaway; mkdir -p ~/.cache/go-build && echo x > ~/.cache/go-build/m"
	r := mustRun(t, env, "run", "--", "sh", "-c", probe)
	if r.Stdout != "throwaway\n" || len(stores(t, root)) != 0 {
		t.Fatalf("a fresh working directory kept caches: %s; stores %v", r, stores(t, root))
	}
	r = mustRun(t, env, "run", "--fresh-home", "--workdir", work, "--", "sh", "-c", probe)
	if r.Stdout != "throwaway\n" || len(stores(t, root)) != 0 {
		t.Fatalf("--fresh-home kept caches: %s; stores %v", r, stores(t, root))
	}
	r = mustRun(t, env, "run", "--workdir", work, "--", "sh", "-c", probe)
	if r.Stdout != "linked\n" || len(stores(t, root)) != 1 {
		t.Fatalf("control: a named working directory kept no caches: %s; stores %v", r, stores(t, root))
	}
	home := t.TempDir()
	r = moatCLI(t, "/", env, "run", "--fresh-home", "--home", home, "--workdir", work, "--", "true")
	if r.Code != 2 || !strings.Contains(r.Stderr, "--fresh-home and --home") {
		t.Fatalf("--fresh-home with --home: want exit 2 naming both, got %s", r)
	}
}

// TestKeptCachesOtherStoresHidden attacks another policy's store from a
// permissive run, which otherwise reaches what the user can: it can
// neither list the stores nor write into one that is not its own. The
// controls: its own cache directory is writable, and a place beside the
// stores is.
func TestKeptCachesOtherStoresHidden(t *testing.T) {
	t.Parallel()
	d := cacheScratch(t)
	env, root, work := cacheSetupIn(t, d)
	mustRun(t, env, "run", "--workdir", work, "--", "sh", "-c", "echo mine > ~/.cache/go-build/m")
	victims := stores(t, root)
	if len(victims) != 1 {
		t.Fatalf("stores %v", victims)
	}
	victim := filepath.Join(root, victims[0], "go-build")
	// An existing directory beside the stores: on the way to a hidden
	// place, a directory keeps only listing, but what is in it stays.
	beside := filepath.Join(filepath.Dir(filepath.Dir(root)), "beside")
	if err := os.Mkdir(beside, 0o700); err != nil {
		t.Fatal(err)
	}
	beside = filepath.Join(beside, "f")
	attack := `ls "$1" 2>/dev/null | grep -q ` + victims[0] + ` && echo listed; echo poison > "$2/m" 2>/dev/null && echo poisoned; echo poison > "$2/new" 2>/dev/null && echo planted;
echo own > ~/.cache/go-build/own && echo own-written; echo x > "$3" && echo beside-written`
	r := mustRun(t, env, "run", "--isolation", "permissive", "--protect-user-home=false", "--workdir", work, "--env", "T=1", "--", "sh", "-c", attack, "sh", root, victim, beside)
	for _, bad := range []string{"listed", "poisoned", "planted"} {
		if strings.Contains(r.Stdout, bad+"\n") {
			t.Errorf("attack: another policy's store was %s: %s", bad, r)
		}
	}
	for _, good := range []string{"own-written", "beside-written"} {
		if !strings.Contains(r.Stdout, good+"\n") {
			t.Errorf("control: %s missing: %s", good, r)
		}
	}
	if b, err := os.ReadFile(filepath.Join(victim, "m")); err != nil || string(b) != "mine\n" {
		t.Errorf("the victim's file: %q, %v", b, err)
	}
}

// TestKeptCachesNeverExecutable: a program copied into a cache directory
// cannot run, even in build mode; the control runs it from the working
// directory.
func TestKeptCachesNeverExecutable(t *testing.T) {
	t.Parallel()
	env, _, work := cacheSetup(t)
	probe := `for d in ~/.cache/go-build ~/go/pkg/mod ~/.npm/_cacache ~/.cache/pip ~/.cargo/registry "$PWD"; do
cp /bin/true "$d/t" && chmod 755 "$d/t" && "$d/t" 2>/dev/null && echo "ran $d" || echo "refused $d"; done`
	r := mustRun(t, env, "run", "--build", "--workdir", work, "--", "sh", "-c", probe)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 6 {
		t.Fatalf("probe: %s", r)
	}
	for _, l := range lines[:5] {
		if !strings.HasPrefix(l, "refused ") {
			t.Errorf("a cache directory is executable: %s", l)
		}
	}
	if !strings.HasPrefix(lines[5], "ran ") {
		t.Errorf("control: build mode did not run the program from the working directory: %s", lines[5])
	}
}

// TestKeptCachesConcurrentRun: while one run holds the project's caches,
// a second run of the same policy gets a throwaway home rather than
// sharing them; once the first is done, the next run gets them again.
func TestKeptCachesConcurrentRun(t *testing.T) {
	t.Parallel()
	env, _, work := cacheSetup(t)
	hold := `readlink ~/.cache/go-build >/dev/null && echo linked; touch started; i=0; while [ ! -e release ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done`
	c := moatCLICmd(t, "/", env, "run", "--workdir", work, "--", "sh", "-c", hold)
	var out strings.Builder
	c.Stdout, c.Stderr = &out, &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(work, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			c.Process.Kill()
			t.Fatalf("the first run did not start: %s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	probe := "readlink ~/.cache/go-build >/dev/null && echo linked || echo throwaway"
	r := mustRun(t, env, "run", "--workdir", work, "--", "sh", "-c", probe)
	os.WriteFile(filepath.Join(work, "release"), nil, 0o600)
	if err := <-done; err != nil || !strings.Contains(out.String(), "linked") {
		t.Fatalf("control: the first run: %v: %s", err, out.String())
	}
	if r.Stdout != "throwaway\n" {
		t.Fatalf("a second run shared the caches the first held: %s", r)
	}
	r = mustRun(t, env, "run", "--workdir", work, "--", "sh", "-c", probe)
	if r.Stdout != "linked\n" {
		t.Fatalf("after the first run, the caches were not taken up again: %s", r)
	}
}

// TestKeptCachesStoreIsAWritablePlace: a config file a run leaves in its
// cache store is refused as a later run's --config, since a sandbox could
// write it; the control reads the same content from a place no sandbox
// could write.
func TestKeptCachesStoreIsAWritablePlace(t *testing.T) {
	t.Parallel()
	env, root, work := cacheSetup(t)
	mustRun(t, env, "run", "--workdir", work, "--", "sh", "-c", `printf '# planted\n' > ~/.cache/go-build/p.toml`)
	found, _ := filepath.Glob(filepath.Join(root, "*", "go-build", "p.toml"))
	if len(found) != 1 {
		t.Fatalf("planted config not in the store: %v", found)
	}
	r := moatCLI(t, "/", env, "run", "--config", found[0], "--", "true")
	if r.Code != 2 || !strings.Contains(r.Stderr, "a sandbox of an earlier run could write") {
		t.Fatalf("a config from a cache store was not refused: %s", r)
	}
	b, err := os.ReadFile(found[0])
	if err != nil {
		t.Fatal(err)
	}
	clean := filepath.Join(t.TempDir(), "p.toml")
	if err := os.WriteFile(clean, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := moatCLI(t, "/", env, "run", "--config", clean, "--", "true"); r.Code != 0 {
		t.Fatalf("control: the same config from a clean place: %s", r)
	}
}

// TestKeptCachesPrunedAtClose: a store unused past the age bound is
// removed, with its record, when a later run of another policy closes;
// the control is that run's own, fresh store, which stays.
func TestKeptCachesPrunedAtClose(t *testing.T) {
	t.Parallel()
	env, root, work := cacheSetup(t)
	mustRun(t, env, "run", "--workdir", work, "--", "sh", "-c", "echo old > ~/.cache/go-build/m")
	old := stores(t, root)
	if len(old) != 1 {
		t.Fatalf("stores %v", old)
	}
	var state string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_STATE_HOME="); ok {
			state = v
		}
	}
	rec := filepath.Join(state, "moat", "cache-homes", old[0]+".rec")
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(b), `"last_use":"`)
	if i < 0 {
		t.Fatalf("record %s", b)
	}
	j := i + len(`"last_use":"`)
	k := strings.IndexByte(string(b[j:]), '"')
	aged := string(b[:j]) + "2020-01-01T00:00:00Z" + string(b[j+k:])
	if err := os.WriteFile(rec, []byte(aged), 0o600); err != nil {
		t.Fatal(err)
	}
	// Another policy's run.
	r := mustRun(t, env, "run", "--workdir", work, "--env", "X=1", "--", "sh", "-c", "echo running")
	if r.Stdout != "running\n" {
		t.Fatal(r)
	}
	left := stores(t, root)
	for _, s := range left {
		if s == old[0] {
			t.Fatalf("the over-age store survived the next run's Close: %v", left)
		}
	}
	if len(left) != 1 {
		t.Fatalf("control: the second run's own store is missing: %v", left)
	}
	if _, err := os.Lstat(rec); err == nil {
		t.Fatal("the over-age store's record survived")
	}
}

// cacheScratch makes a directory in the test user's home, removed at the
// end: outside /tmp, which is private to a sandbox, so that a permissive
// run's control can show it reaches the stores' neighbourhood.
func cacheScratch(t *testing.T) string {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	d, err := os.MkdirTemp(home, "cachetest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}
