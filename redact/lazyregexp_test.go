package redact

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRulePatternsCompile compiles every rule's pattern: they compile on
// first use, so one that does not would otherwise fail only when a text
// first reaches its prefix.
func TestRulePatternsCompile(t *testing.T) {
	if len(lazyRegexps) < 10 {
		t.Fatalf("only %d patterns registered: anchored no longer registers them", len(lazyRegexps))
	}
	for _, l := range lazyRegexps {
		if _, err := regexp.Compile(l.src); err != nil {
			t.Errorf("pattern %q: %v", l.src, err)
		}
	}
}

// TestPackageInitIsCheap runs this test binary again with the runtime's
// init trace and checks what this package's initialisation allocates:
// every program that links moat, its sandbox helper among them, pays it
// at each start. Compiling the rules eagerly allocated about 420 kB.
func TestPackageInitIsCheap(t *testing.T) {
	const maxInitBytes = 64 << 10
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		// init github.com/moat-sandbox/moat/redact @1.7 ms, 0.038 ms clock, 8888 bytes, 35 allocs
		f := strings.Fields(line)
		if len(f) < 9 || f[0] != "init" || f[1] != "github.com/moat-sandbox/moat/redact" {
			continue
		}
		n, err := strconv.Atoi(f[7])
		if err != nil || f[8] != "bytes," {
			t.Fatalf("cannot read the init trace line %q", line)
		}
		if n > maxInitBytes {
			t.Errorf("package init allocates %d bytes, want at most %d: compile patterns on first use (lazyRegexp)", n, maxInitBytes)
		}
		return
	}
	t.Fatalf("no init trace line for this package in:\n%s", out)
}
