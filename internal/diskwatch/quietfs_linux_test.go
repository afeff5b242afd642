package diskwatch

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// quietEnv names, in the child process quietRoot starts, the directory
// where it mounts a tmpfs of its own.
const quietEnv = "MOAT_DISKWATCH_QUIET_ROOT"

// quietRoot gives the calling test a directory on a file system nothing
// else writes, since the watch measures a file system's free space and a
// busy host moves it (a concurrent suite that deletes a tree frees more
// than a case writes). The test runs again in a child process, in a user
// and mount namespace of its own, on a tmpfs mounted there; quietRoot
// returns the directory in the child and false in the parent, which has
// then already checked the child's result and should return. Where no
// namespace can be made it returns a temporary directory on the shared
// file system, and the cases' retries absorb the noise.
func quietRoot(t *testing.T) (string, bool) {
	t.Helper()
	if dir := os.Getenv(quietEnv); dir != "" {
		if err := syscall.Mount("moat-diskwatch", dir, "tmpfs", 0, "size=64m,nr_inodes=16384"); err != nil {
			t.Fatalf("mount a tmpfs on %s in the test's own namespace: %v", dir, err)
		}
		return dir, true
	}
	dir := filepath.Join(t.TempDir(), "quiet")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), quietEnv+"="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		GidMappingsEnableSetgroups: false,
	}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Logf("ran on a tmpfs of its own, in a child process:\n%s", out)
		return "", false
	}
	if _, ok := err.(*exec.ExitError); ok {
		t.Fatalf("on a tmpfs of its own, in a child process: %v\n%s", err, out)
	}
	t.Logf("no user and mount namespace for a tmpfs of its own (%v): measuring the shared file system", err)
	return t.TempDir(), true
}

// quietDir makes a fresh directory under root for one try.
func quietDir(t *testing.T, root string) string {
	t.Helper()
	dir, err := os.MkdirTemp(root, "case")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
