package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// moatBin is the moat binary the integration tests run, built by TestMain.
var moatBin string

// TestMain builds cmd/moat once, with the go command from PATH, for the
// integration tests; MOAT_TEST_BINARY names one built already, for a test
// binary run outside the module (as another user, say).
func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "moat-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "TestMain:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	// World-readable, so a sandbox of any user can execute the binary.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "TestMain:", err)
		return 1
	}
	if bin := os.Getenv("MOAT_TEST_BINARY"); bin != "" {
		moatBin = bin
		return m.Run()
	}
	moatBin = filepath.Join(dir, "moat")
	build := exec.Command("go", "build", "-o", moatBin, "github.com/moat-sandbox/moat/cmd/moat")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "TestMain: building moat:", err)
		return 1
	}
	return m.Run()
}
