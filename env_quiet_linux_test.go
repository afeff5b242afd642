package moat_test

import (
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// A sandbox's commands run with npm's update notifier off, so that a
// successful npm command asks no registry (and moat reports no refused
// lookup); Env.Set still overrides it. test/recipes shows the refusal line
// gone for a real npm init and npm test.
func TestQuietEnvUpdateNotifier(t *testing.T) {
	tests := []struct {
		name string
		set  []string
		want []string
	}{
		{name: "default", want: []string{"npm_config_update_notifier=false", "NO_UPDATE_NOTIFIER=1"}},
		{name: "Env.Set overrides", set: []string{"npm_config_update_notifier=true", "NO_UPDATE_NOTIFIER="},
			want: []string{"npm_config_update_notifier=true", "NO_UPDATE_NOTIFIER="}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb := newSandbox(t, moat.Config{Isolation: moat.IsolationDefault, Env: moat.Env{Set: tt.set}})
			out, err := sb.Command("env").Output()
			if err != nil {
				t.Fatalf("env: %v", err)
			}
			lines := strings.Split(string(out), "\n")
			for _, w := range tt.want {
				found := false
				for _, l := range lines {
					found = found || l == w
				}
				if !found {
					t.Errorf("the sandbox's environment has no %q:\n%s", w, out)
				}
			}
		})
	}
}
