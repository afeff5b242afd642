//go:build linux

package moat_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
	"github.com/moat-sandbox/moat/ipc"
)

// New spawns the zygote before it works out the policy. A New that fails
// after that ends the zygote: nothing is left behind. Control: a New that
// succeeds has its zygote from the start, until Close.
func TestNewFailureEndsSpawnedZygote(t *testing.T) {
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if bin, err = filepath.EvalSymlinks(bin); err != nil {
		t.Fatal(err)
	}
	r := ipc.NewRouter()
	if err := ipc.Register(r, "noop", func(context.Context, struct{}, ipc.Call) (string, error) { return "", nil }); err != nil {
		t.Fatal(err)
	}
	// The IPC check refuses a binary in the working directory, after the
	// zygote was spawned.
	_, err = moat.New(moat.Config{WorkDir: filepath.Dir(bin), IPC: r, Isolation: moat.IsolationDefault})
	if err == nil || !strings.Contains(err.Error(), "where the sandbox writes") {
		t.Fatalf("New = %v, want the IPC binary refused", err)
	}
	if z := moattest.Zygotes(); len(z) != 0 {
		t.Errorf("zygotes left by a failed New: %v", z)
	}
	sb, err := moat.New(moat.Config{})
	if err != nil {
		t.Fatal(err)
	}
	// The spawn runs beside New: wait for it.
	var z []int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if z = moattest.Zygotes(); len(z) == 1 {
			break
		}
	}
	if len(z) != 1 {
		t.Errorf("control: after New, zygotes %v, want one", z)
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if z := moattest.Zygotes(); len(z) != 0 {
		t.Errorf("zygotes left after Close: %v", z)
	}
}
