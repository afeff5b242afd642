package linux

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestVforkSpawnMaps starts children the way the zygote is started (a
// vforked child in a new user namespace, its maps written after its exec)
// and checks that moat maps the user to itself, and that a map somebody
// else wrote first (a process of the same user racing moat) makes the
// spawn fail instead of leaving the helper with a map moat did not choose.
func TestVforkSpawnMaps(t *testing.T) {
	if !Probe().UserNS {
		t.Skipf("user namespaces unavailable here: %s", Probe().UserNSReason)
	}
	uid, gid := os.Geteuid(), os.Getegid()
	tests := []struct {
		name     string
		preWrite string // written to the child's uid_map before moat's map, if not empty
		wantErr  string
	}{
		{name: "moat maps the user to itself"},
		{name: "a map written first is refused", preWrite: fmt.Sprintf("0 %d 1\n", uid), wantErr: "uid_map"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("/bin/sleep", "30")
			cmd.SysProcAttr = vforkNamespaceAttr(syscall.CLONE_NEWUSER)
			if err := cmd.Start(); err != nil {
				t.Fatalf("start: %v", err)
			}
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
			pid := cmd.Process.Pid
			proc := "/proc/" + strconv.Itoa(pid) + "/"
			if tc.preWrite != "" {
				if err := os.WriteFile(proc+"uid_map", []byte(tc.preWrite), 0); err != nil {
					t.Fatalf("the racing write failed, so this case proves nothing: %v", err)
				}
			}
			err := mapSpawnedUser(pid)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("mapSpawnedUser after another map = %v, want an error naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("mapSpawnedUser: %v", err)
			}
			for file, want := range map[string][]string{
				"uid_map":   {strconv.Itoa(uid), strconv.Itoa(uid), "1"},
				"gid_map":   {strconv.Itoa(gid), strconv.Itoa(gid), "1"},
				"setgroups": {"deny"},
			} {
				b, err := os.ReadFile(proc + file)
				if err != nil {
					t.Fatal(err)
				}
				if got := strings.Fields(string(b)); strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("%s = %q, want %q", file, got, want)
				}
			}
		})
	}
}
