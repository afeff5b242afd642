//go:build linux

package escape_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
)

// fallocateSource reserves disk blocks without writing: argv[1] the
// directory, argv[2] the mode (0, or 1 for FALLOC_FL_KEEP_SIZE), argv[3]
// the number of files, argv[4] the bytes each. It prints how many calls
// succeeded and the last errno, then waits a second for the disk watch.
const fallocateSource = `#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) {
	int mode = atoi(argv[2]), n = atoi(argv[3]), ok = 0, err = 0;
	long long len = atoll(argv[4]);
	char path[4096];
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/f%d", argv[1], i);
		int fd = open(path, O_WRONLY|O_CREAT|O_TRUNC, 0644);
		if (fd < 0) { err = errno; break; }
		if (fallocate(fd, mode, 0, len) == 0) ok++; else err = errno;
		close(fd);
	}
	printf("ALLOCATED %d ERRNO %d\n", ok, err);
	fflush(stdout);
	sleep(1);
	return 0;
}
`

// TestFallocateRefused is limits F2: fallocate reserves disk blocks
// without writing them, past RLIMIT_FSIZE with FALLOC_FL_KEEP_SIZE (20 GiB
// under --disk 100M) and, in mode 0 over many files, far past the disk
// limit within one poll of the disk watch. The seccomp filter fails every
// mode with EOPNOTSUPP; the disk then holds no more than the limit.
// Control: the same probe on the host (no filter) allocates.
func TestFallocateRefused(t *testing.T) {
	t.Parallel()
	need(t, "gcc")
	bindir := t.TempDir()
	if err := os.Chmod(bindir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, bin := filepath.Join(bindir, "falloc.c"), filepath.Join(bindir, "falloc")
	if err := moattest.WriteFile(src, []byte(fallocateSource), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O1", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	const limit = 100 << 20
	cases := []struct {
		name, mode, files, bytes string
	}{
		{"keep size, 20 GiB", "1", "1", fmt.Sprint(int64(20) << 30)},
		{"mode 0, 200 files of 100 MB", "0", "200", "100000000"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			sb := newSandbox(t, moat.Config{
				Grants: []moat.Grant{{Path: bindir, Access: moat.EXEC}, {Path: dir, Access: moat.READ | moat.WRITE}},
				Limits: moat.Limits{DiskBytes: limit, Timeout: time.Minute},
			})
			r := inSandbox(t, sb, bin, dir, tc.mode, tc.files, tc.bytes)
			used := allocatedBytes(dir)
			t.Logf("%d bytes on disk under --disk 100M: %s", used, r)
			if !strings.Contains(r.Stdout, "ALLOCATED 0 ERRNO 95") {
				t.Fatalf("fallocate was not refused with EOPNOTSUPP: %s", r)
			}
			if used > 2*limit {
				t.Fatalf("%d bytes reserved under --disk 100M", used)
			}
		})
	}
	// Control: without the filter the probe reserves blocks.
	dir := t.TempDir()
	r := onHost(t, bin, dir, "1", "1", fmt.Sprint(64<<20))
	used := allocatedBytes(dir)
	if !strings.Contains(r.Stdout, "ALLOCATED 1 ERRNO 0") || used < 64<<20 {
		t.Fatalf("control: fallocate on the host reserved %d bytes: %s", used, r)
	}
}

// allocatedBytes adds up the disk blocks of the files in dir (st_blocks,
// not the size: FALLOC_FL_KEEP_SIZE reserves blocks past it).
func allocatedBytes(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			}
		}
		return nil
	})
	return n
}
