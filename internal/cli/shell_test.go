package cli

import "testing"

func TestDefaultShell(t *testing.T) {
	tests := []struct {
		name   string
		env    string
		exists []string
		want   string
	}{
		{name: "SHELL under /usr", env: "/usr/bin/zsh", exists: []string{"/usr/bin/zsh", "/bin/bash"}, want: "/usr/bin/zsh"},
		{name: "SHELL under /bin", env: "/bin/dash", exists: []string{"/bin/dash"}, want: "/bin/dash"},
		{name: "SHELL cleaned", env: "/usr/bin/../bin/zsh", exists: []string{"/usr/bin/zsh"}, want: "/usr/bin/zsh"},
		{name: "SHELL outside the sandbox's executables", env: "/home/me/bin/fish", exists: []string{"/home/me/bin/fish", "/bin/bash"}, want: "/bin/bash"},
		{name: "SHELL escaping /usr", env: "/usr/../home/me/sh", exists: []string{"/home/me/sh"}, want: "/bin/sh"},
		{name: "SHELL missing", env: "/usr/bin/zsh", exists: []string{"/bin/bash"}, want: "/bin/bash"},
		{name: "SHELL relative", env: "bin/zsh", exists: []string{"bin/zsh"}, want: "/bin/sh"},
		{name: "no SHELL, bash", env: "", exists: []string{"/bin/bash"}, want: "/bin/bash"},
		{name: "no SHELL, no bash", env: "", want: "/bin/sh"},
		{name: "/usrlocal is not /usr", env: "/usrlocal/zsh", exists: []string{"/usrlocal/zsh"}, want: "/bin/sh"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exists := func(p string) bool {
				for _, e := range tt.exists {
					if e == p {
						return true
					}
				}
				return false
			}
			if got := defaultShell(tt.env, exists); got != tt.want {
				t.Errorf("defaultShell(%q) = %q, want %q", tt.env, got, tt.want)
			}
		})
	}
}
