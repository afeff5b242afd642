package paths

import "testing"

func TestUnderWindows(t *testing.T) {
	cases := []struct {
		p, dir string
		want   bool
	}{
		{`C:\Windows\System32\cmd.exe`, `c:\windows`, true},
		{`C:\Windows`, `C:\Windows`, true},
		{`C:\WindowsApps\x.exe`, `C:\Windows`, false},
		{`C:\x`, `C:\`, true},
		{`C:/Windows/notepad.exe`, `C:\Windows`, true},
		{`D:\Windows`, `C:\Windows`, false},
	}
	for _, c := range cases {
		if got := Under(c.p, c.dir); got != c.want {
			t.Errorf("Under(%q, %q) = %v", c.p, c.dir, got)
		}
	}
}
