package linux

import "testing"

// A process names itself; its name must not pass for a field of its
// status (a sandboxed process hiding its memory from the watch).
func TestStatusKBIgnoresTheName(t *testing.T) {
	cases := []struct {
		name, status string
		want         int64
	}{
		{"plain", "Name:\tpython3\nVmRSS:\t  2048 kB\n", 2048},
		{"name looks like the field", "Name:\tVmRSS: 0\nUmask:\t0022\nVmRSS:\t 4096 kB\n", 4096},
		{"name with a newline-free trick", "Name:\tx VmRSS: 1\nVmRSS:\t8 kB\n", 8},
		{"missing", "Name:\tkthreadd\n", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := statusKB([]byte(tc.status), "VmRSS:"); got != tc.want {
				t.Errorf("statusKB = %d, want %d", got, tc.want)
			}
		})
	}
}

func FuzzStatusKB(f *testing.F) {
	for _, s := range []string{"Name:\tVmPTE: 9\nVmPTE:\t  8192 kB\n", "VmPTE:", "VmPTE:\t-1 kB\n", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = statusKB(b, "VmPTE:")
	})
}
