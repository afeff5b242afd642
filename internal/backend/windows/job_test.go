package windows

import (
	"testing"

	"github.com/moat-sandbox/moat/internal/spec"
)

func TestLimits(t *testing.T) {
	cases := []struct {
		name string
		l    spec.Limits
		nice int
		want JobLimits
	}{
		{"none", spec.Limits{}, 0, JobLimits{Flags: limitKillOnJobClose | limitDieOnException, UIRestrictions: uiLimitAll}},
		{"negative is none", spec.Limits{MemoryBytes: -1, Processes: -1, CPUSeconds: -1}, -3, JobLimits{Flags: limitKillOnJobClose | limitDieOnException, UIRestrictions: uiLimitAll}},
		{"all", spec.Limits{MemoryBytes: 1 << 30, Processes: 64, CPUSeconds: 5, FileSizeBytes: 1, OpenFiles: 1}, 5, JobLimits{
			Flags:     limitKillOnJobClose | limitDieOnException | limitJobMemory | limitProcessMemory | limitActiveProcess | limitProcessTime | limitPriorityClass,
			JobMemory: 1 << 30, ProcessMemory: 1 << 30, ActiveProcesses: 64, PerProcessUserTime: 50_000_000,
			PriorityClass: priorityBelowNormal, UIRestrictions: uiLimitAll}},
		{"clamped", spec.Limits{Processes: 1 << 40, CPUSeconds: 1 << 62}, 19, JobLimits{
			Flags:           limitKillOnJobClose | limitDieOnException | limitActiveProcess | limitProcessTime | limitPriorityClass,
			ActiveProcesses: maxActiveProcesses, PerProcessUserTime: maxUserTimeInSeconds * ticksPerSecond,
			PriorityClass: priorityIdle, UIRestrictions: uiLimitAll}},
	}
	for _, c := range cases {
		if got := Limits(c.l, c.nice); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestPriorityClass(t *testing.T) {
	for nice, want := range map[int]uint32{0: 0, -1: 0, 1: priorityBelowNormal, 9: priorityBelowNormal, 10: priorityIdle, 19: priorityIdle} {
		if got := PriorityClass(nice); got != want {
			t.Errorf("nice %d: %#x, want %#x", nice, got, want)
		}
	}
}
