//go:build linux

package escape_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
)

// pageTableSource maps argv[1] GiB PROT_READ and MAP_NORESERVE, and reads
// one byte per 2 MiB: each read maps the zero page and costs one page of
// page tables, nothing resident. It prints its VmPTE, then holds for
// argv[2] seconds and prints SURVIVED.
const pageTableSource = `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
int main(int argc, char **argv) {
	size_t len = (size_t)atol(argv[1]) << 30;
	volatile char *p = mmap(0, len, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) { perror("mmap"); return 1; }
	madvise((void *)p, len, MADV_NOHUGEPAGE);
	long sum = 0;
	for (size_t o = 0; o < len; o += 2 << 20) sum += p[o];
	char buf[8192]; FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(buf, sizeof buf, f)) if (!strncmp(buf, "VmPTE:", 6)) fputs(buf, stdout);
	fflush(stdout);
	sleep(atoi(argv[2]));
	printf("SURVIVED %ld\n", sum);
	return 0;
}
`

// TestMemwatchPageTables is limits F1: page tables are memory a process
// holds without anything resident. 192 GiB of a read-only mapping read
// once per 2 MiB holds 384 MiB of page tables and no resident page; under
// --memory 256M the watch must count them and kill. Control: under 2 GiB
// the same probe survives, and its VmPTE really grew past 256 MiB.
func TestMemwatchPageTables(t *testing.T) {
	t.Parallel()
	need(t, "gcc")
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, bin := filepath.Join(dir, "pte.c"), filepath.Join(dir, "pte")
	if err := moattest.WriteFile(src, []byte(pageTableSource), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O1", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	grant := []moat.Grant{{Path: dir, Access: moat.EXEC}}
	cases := []struct {
		name  string
		limit int64
		kill  bool
	}{
		{"under 256 MiB, killed", 256 << 20, true},
		{"control: under 2 GiB, survives", 2 << 30, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t, moat.Config{Grants: grant, Limits: moat.Limits{MemoryBytes: tc.limit}})
			r := inSandbox(t, sb, bin, "192", "3")
			if tc.kill {
				ee, ok := r.Err.(*moat.ExitError)
				if strings.Contains(r.Stdout, "SURVIVED") || !ok || !strings.Contains(ee.Reason(), "memory") {
					t.Fatalf("384 MiB of page tables under --memory 256M: want a kill by the memory limit, got %v: %s", r.Err, r)
				}
				return
			}
			m := regexp.MustCompile(`VmPTE:\s+(\d+) kB`).FindStringSubmatch(r.Stdout)
			if r.Err != nil || !strings.Contains(r.Stdout, "SURVIVED") || m == nil {
				t.Fatalf("control: the probe did not survive under 2 GiB: %s", r)
			}
			if kb, _ := strconv.Atoi(m[1]); kb < 300<<10 {
				t.Fatalf("control: VmPTE only %d kB: the probe did not build page tables", kb)
			}
		})
	}
}
