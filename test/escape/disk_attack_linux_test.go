//go:build linux

package escape_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat"
)

// otherFSDir makes a directory, open to the test user, on a file system
// other than the one of the sandbox's working directory: /dev/shm, a
// tmpfs on every Linux host moat supports.
func otherFSDir(t *testing.T, sb *moat.Sandbox) string {
	t.Helper()
	// A second quiet file system where test.sh made one: /dev/shm is
	// shared with the tests that run beside this one, whose writes and
	// removals there move what the disk watch measures.
	base := os.Getenv("MOAT_ESCAPE_QUIET_FS2")
	if base == "" {
		t.Log("no second quiet file system (MOAT_ESCAPE_QUIET_FS2, which test.sh run as root mounts): using /dev/shm")
		base = "/dev/shm"
	}
	dir, err := os.MkdirTemp(base, "moat-disk-")
	if err != nil {
		t.Fatalf("a directory on another file system: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var a, b unix.Statfs_t
	if err := unix.Statfs(dir, &a); err != nil {
		t.Fatal(err)
	}
	if err := unix.Statfs(sb.WorkDir(), &b); err != nil {
		t.Fatal(err)
	}
	if a.Fsid == b.Fsid {
		t.Fatalf("%s is on the working directory's file system; the attack needs another one", base)
	}
	return dir
}

// duBytes is the bytes of the regular files below dir, and their count.
func duBytes(dir string) (bytes int64, files int) {
	_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			bytes += fi.Size()
			files++
		}
		return nil
	})
	return bytes, files
}

// Finding 6: a writable grant on another file system escaped the disk
// limit (190 MB under --disk 20M). Each case writes files of 1 MiB into
// such a grant; under 20 MiB it passes, past it the command is refused
// with the --disk message, and what was written stays within one poll
// (and one file's RLIMIT_FSIZE) of the limit. Control: the same writes
// with no disk limit all land. Not parallel: the limit is a free-space
// delta. The working directory is on the battery's own tmpfs where there
// is one; else its file system is shared with the rest of the host, whose
// writers can move it by a few MiB while a case runs, and the cases keep
// that far from the bound.
func TestDiskGrantOtherFileSystem(t *testing.T) {
	const limit = 20 << 20
	cases := []struct {
		name    string
		mib     int
		disk    int64
		refused bool
	}{
		{"well under the limit", 10, limit, false},
		{"past the limit by as much", 26, limit, true},
		{"the attack: 150 MiB", 150, limit, true},
		{"control: no disk limit", 150, -1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The working directory and the sandbox's state on the
			// battery's own tmpfs where test.sh made one (quietFS): on
			// the shared one, the suites beside it wrote 20 MiB within a
			// case and counted against it.
			work, _ := quietFS(t)
			probe := newSandbox(t, moat.Config{WorkDir: work})
			dir := otherFSDir(t, probe)
			sb := newSandbox(t, moat.Config{
				WorkDir: work,
				Grants:  []moat.Grant{{Path: dir, Access: moat.READ | moat.WRITE}},
				Limits:  moat.Limits{DiskBytes: tc.disk, Timeout: time.Minute},
			})
			script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do head -c 1048576 /dev/zero > %s/f$i || exit 3; i=$((i+1)); done; echo WROTE $i`, tc.mib, dir)
			r := sh(t, sb, script)
			bytes, files := duBytes(dir)
			t.Logf("%d files, %d bytes written under --disk %d: %v", files, bytes, tc.disk, r.Err)
			if !tc.refused {
				if r.Err != nil || !strings.Contains(r.Stdout, fmt.Sprintf("WROTE %d", tc.mib)) {
					t.Fatalf("refused under the limit: %s", r)
				}
				return
			}
			if r.Err == nil {
				t.Fatalf("wrote %d bytes into a grant on another file system under --disk %d, unrefused: %s", bytes, tc.disk, r)
			}
			// Either the watch killed it (the --disk message), or the
			// file-size budget it lowered to the bytes left stopped the
			// write (SIGXFSZ in the writer, the probe's own exit 3)
			// before the limit was passed.
			ee := exitError(t, r.Err)
			budget := r.Code == 3 && strings.Contains(r.Stderr, "File size limit exceeded") && bytes <= limit
			if !strings.Contains(ee.Reason(), "--disk") && !budget {
				t.Fatalf("Reason() = %q, want the --disk message: %s", ee.Reason(), r)
			}
			// One poll of 1 MiB writes, and one file, past the limit at
			// most: far from the 190 MB of the finding.
			if bytes > limit+limit/2 {
				t.Fatalf("%d bytes written under a %d-byte limit", bytes, limit)
			}
		})
	}
}

// Bursts of files: a shell loop of bare redirections makes files faster
// than the disk watch polls. Under --disk-inodes 100 it was let make 500
// files on tmpfs with no message. Now the burst is refused with the
// --disk-inodes message, by the poll or by the last sample when the
// command ends, and what it made is within one poll's worth of the
// bound (the number is logged). Under the bound passes. The cases stay
// 50 files from the bound: /dev/shm is shared with the host's other
// users, whose files count too and whose deletions offset. Control:
// with no inode limit all 500 are made. In the private /tmp and in a
// writable grant on tmpfs. The sandbox's state (its private /tmp) is made
// on tmpfs too (TMPDIR), where no other writer of the host moves the
// free-inode count: on a busy shared file system other writers' files
// count too, and what they delete offsets.
func TestDiskInodeBurst(t *testing.T) {
	const limit = 100
	// A tmpfs no other suite writes, where test.sh made one (quietFS);
	// else /dev/shm, shared with the host, and the retries below.
	shm := "/dev/shm"
	if q := os.Getenv("MOAT_ESCAPE_QUIET_FS"); q != "" {
		shm = q
	}
	state, err := os.MkdirTemp(shm, "moat-disk-state-")
	if err != nil {
		t.Fatalf("a state directory on tmpfs: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(state) })
	t.Setenv("TMPDIR", state)
	cases := []struct {
		name    string
		where   string // "tmp" or "grant"
		n       int
		inodes  int64
		refused bool
	}{
		{"private tmp: under the bound", "tmp", 50, limit, false},
		{"private tmp: past the bound", "tmp", 150, limit, true},
		{"private tmp: the burst of 500", "tmp", 500, limit, true},
		{"private tmp: control without a limit", "tmp", 500, -1, false},
		{"tmpfs grant: under the bound", "grant", 50, limit, false},
		{"tmpfs grant: past the bound", "grant", 150, limit, true},
		{"tmpfs grant: the burst of 500", "grant", 500, limit, true},
		{"tmpfs grant: control without a limit", "grant", 500, -1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := moat.Config{Limits: moat.Limits{DiskInodes: tc.inodes, Timeout: time.Minute}}
			target := "/tmp/burst"
			var grant string
			if tc.where == "grant" {
				d, err := os.MkdirTemp(shm, "moat-disk-grant-")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.RemoveAll(d) })
				grant = d
				cfg.Grants = []moat.Grant{{Path: grant, Access: moat.READ | moat.WRITE}}
				target = grant
			}
			script := fmt.Sprintf(`mkdir -p %[1]s; i=0; while [ $i -lt %[2]d ]; do : > %[1]s/f$i || break; i=$((i+1)); done; echo MADE $i; ls %[1]s | wc -l`, target, tc.n)
			// /dev/shm is shared: another process deleting files there
			// during the burst offsets the count, so a case past the
			// bound gets three tries (test.sh runs suites side by side).
			var r result
			for try := 1; try <= 3; try++ {
				if grant != "" {
					os.RemoveAll(filepath.Join(grant, "burst"))
					entries, _ := os.ReadDir(grant)
					for _, e := range entries {
						os.Remove(filepath.Join(grant, e.Name()))
					}
				}
				sb := newSandbox(t, cfg)
				r = sh(t, sb, script)
				t.Logf("try %d: %s", try, strings.TrimSpace(r.Stdout))
				if !tc.refused || r.Err != nil {
					break
				}
			}
			if !tc.refused {
				if r.Err != nil || !strings.Contains(r.Stdout, fmt.Sprintf("MADE %d", tc.n)) {
					t.Fatalf("refused within the bound: %s", r)
				}
				return
			}
			if r.Err == nil {
				t.Fatalf("made %d files under --disk-inodes %d with no message: %s", tc.n, tc.inodes, r)
			}
			ee := exitError(t, r.Err)
			if !strings.Contains(ee.Reason(), "--disk-inodes") {
				t.Fatalf("Reason() = %q, want the --disk-inodes message", ee.Reason())
			}
			if grant != "" {
				if _, files := duBytes(grant); files > 500 {
					t.Fatalf("%d files in the grant", files)
				}
			}
		})
	}
}

// Report says how the disk limit is enforced, and that writable grants
// are counted.
func TestDiskReport(t *testing.T) {
	cases := []struct {
		name   string
		limits moat.Limits
		active bool
	}{
		{"limited", moat.Limits{DiskBytes: 20 << 20}, true},
		{"control: unlimited", moat.Limits{DiskBytes: -1, DiskInodes: -1}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := newSandbox(t, moat.Config{Limits: tc.limits}).Report()
			if got := rep.Active("disk"); got != tc.active {
				t.Fatalf("disk layer active = %v, want %v:\n%s", got, tc.active, rep)
			}
			if tc.active && !strings.Contains(rep.String(), "writable grants") {
				t.Fatalf("the disk layer does not say the writable grants are counted:\n%s", rep)
			}
		})
	}
}
