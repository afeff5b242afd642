//go:build linux

package moat

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/internal/limitkill"
)

// Every limit kill reads as one line naming the limit and its flag.
func TestLimitKillLines(t *testing.T) {
	cases := []struct {
		k    limitkill.Kill
		want string
	}{
		{limitkill.Memory(64<<20, "resident 10 MiB, socket buffers 60 MiB"), "limit: memory: killed: the sandbox used more than 64 MiB (resident 10 MiB, socket buffers 60 MiB) (--memory SIZE, Limits.MemoryBytes)"},
		{limitkill.Memory(64<<20, "unmeasured: process 7: 2 of its threads run, and none shows the process's memory"), "limit: memory: killed: the memory watch could not measure the sandbox (process 7: 2 of its threads run, and none shows the process's memory), which is treated as over its 64 MiB limit (--memory unlimited, Limits.MemoryBytes -1)"},
		{limitkill.Disk(20<<20, 21<<20), "limit: disk: killed: the sandbox wrote 21 MiB, more than its 20 MiB (--disk SIZE, Limits.DiskBytes)"},
		{limitkill.Inodes(5120, 5200), "limit: disk-inodes: killed: the sandbox created 5200 files and directories, more than its 5120 (--disk-inodes N, Limits.DiskInodes)"},
		{limitkill.CPU(2), "limit: cpu-time: killed: a process used 2s of CPU time (--cpu-time SECONDS, Limits.CPUSeconds)"},
		{limitkill.Timeout(time.Second), "limit: timeout: killed after 1s (--timeout DURATION, Limits.Timeout)"},
		{limitkill.FileSize(1024), "limit: file-size: killed: a file reached 1 KiB (--file-size SIZE, Limits.FileSizeBytes)"},
	}
	for _, tc := range cases {
		if got := limitRefusal(tc.k).String(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}

// The kernel's rlimit kills are recognised from the wait status, and only
// where the limit is set.
func TestKernelLimitKill(t *testing.T) {
	cases := []struct {
		name    string
		script  string
		lim     Limits
		fsize   int64
		subject string // "" means not a limit kill
	}{
		{"SIGXCPU with a CPU limit", "kill -XCPU $$", Limits{CPUSeconds: 1}, 0, "cpu-time"},
		{"SIGXCPU without one", "kill -XCPU $$", Limits{}, 0, ""},
		{"SIGKILL before the CPU limit", "kill -KILL $$", Limits{CPUSeconds: 100}, 0, ""},
		{"SIGXFSZ at the disk budget", "kill -XFSZ $$", Limits{FileSizeBytes: 4 << 30}, 20 << 20, "disk"},
		{"SIGXFSZ at the file size limit", "kill -XFSZ $$", Limits{FileSizeBytes: 1024}, 0, "file-size"},
		{"exit 1", "exit 1", Limits{CPUSeconds: 1, FileSizeBytes: 1}, 1, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := exec.Command("/bin/sh", "-c", tc.script)
			_ = c.Run()
			cmd := &Cmd{sb: &Sandbox{cfg: Config{Limits: tc.lim}}}
			k, ok := cmd.kernelLimitKill(c.ProcessState, tc.fsize)
			if ok != (tc.subject != "") || k.Subject != tc.subject {
				t.Fatalf("kernelLimitKill = %+v, %v; want subject %q", k, ok, tc.subject)
			}
		})
	}
}

// A limit kill is recorded once: the first reason wins and one refusal.
func TestLimitKilledOnce(t *testing.T) {
	c := &Cmd{sb: &Sandbox{}}
	first := c.limitKilled(limitkill.Timeout(time.Second))
	c.limitKilled(limitkill.Disk(1, 2))
	c.limitKilled(limitkill.Timeout(time.Second))
	if c.reason != first || !strings.Contains(first, "timeout") {
		t.Fatalf("reason = %q", c.reason)
	}
	if r := c.sb.Refusals(); len(r) != 1 || r[0].Subject != "timeout" || r[0].Kind != "limit" {
		t.Fatalf("refusals = %v", r)
	}
}
