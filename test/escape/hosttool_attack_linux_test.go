//go:build linux

package escape_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostToolOnPathPlanted: a sandbox given a project (moat run
// --workdir) makes bin/ there and plants python3 and uv in it, where the
// user's PATH already names that bin/ (direnv's PATH_add bin, ./bin,
// node_modules/.bin: an entry that did not exist yet). The next moat
// python finds them on PATH and, before this was checked, ran the
// sandbox's program on the host to make its venv. Now each is refused,
// naming the file and the fix, and the marker outside every sandbox's
// view never appears. Control: the same programs in a directory of the
// user's own, which no run could write, are run (the probe is real).
func TestHostToolOnPathPlanted(t *testing.T) {
	root := t.TempDir()
	state, cache := filepath.Join(root, "state"), filepath.Join(root, "cache")
	proj, own := filepath.Join(root, "proj"), filepath.Join(root, "own")
	markers := filepath.Join(root, "markers")
	for _, d := range []string{proj, own, markers} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Each program notes that it ran on the host (markers is not in any
	// sandbox's view) and then behaves as the real tool would.
	plant := func(name, real string) string {
		return "#!/bin/sh\n[ -d " + markers + " ] && echo ran >> " + markers + "/" + name + "\nexec " + real + " \"$@\"\n"
	}
	programs := map[string]string{"python3": plant("python3", "/usr/bin/python3"), "uv": plant("uv", "/bin/false")}
	script := "mkdir -p bin"
	for name, body := range programs {
		script += " && printf '%s' '" + strings.ReplaceAll(body, "'", `'\''`) + "' > bin/" + name + " && chmod 755 bin/" + name
	}
	env := []string{"XDG_STATE_HOME=" + state, "XDG_CACHE_HOME=" + cache}
	if r := moatCLI(t, proj, env, "run", "--workdir", ".", "--", "sh", "-c", script); r.Code != 0 {
		t.Fatalf("the sandbox could not plant its programs: %v", r)
	}

	withPath := func(dir string) []string {
		return append(append([]string(nil), env...), "PATH="+dir+":"+os.Getenv("PATH"))
	}
	r := moatCLI(t, root, withPath(filepath.Join(proj, "bin")), "python", "-c", "print(42)")
	if r.Code == 0 {
		t.Errorf("moat python with the sandbox's python3 first on PATH succeeded: %v", r)
	}
	if !strings.Contains(r.Stderr, "python3 found on PATH") || !strings.Contains(r.Stderr, "moat trust") {
		t.Errorf("the refusal does not name the program and the fix: %v", r)
	}
	if entries, _ := os.ReadDir(markers); len(entries) != 0 {
		t.Fatalf("the sandbox's program ran on the host: %v", entries)
	}

	// Control: the same programs where no sandbox could write.
	for name, body := range programs {
		if err := os.WriteFile(filepath.Join(own, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r = moatCLI(t, root, withPath(own), "python", "--venv-backend", "python", "-c", "print(42)")
	if r.Code != 0 || !strings.Contains(r.Stdout, "42") {
		t.Fatalf("control: moat python with the user's own python3 on PATH: %v", r)
	}
	if _, err := os.Stat(filepath.Join(markers, "python3")); err != nil {
		t.Fatalf("control: the user's own python3 did not run on the host, so the probe proves nothing: %v", err)
	}
}
