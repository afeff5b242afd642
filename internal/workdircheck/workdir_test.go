package workdircheck

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A place in moat's state directory is refused, whatever names it; one
// that holds it, or lies beside it, is not.
func TestStatePlaces(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "state")
	for _, d := range []string{"state/journals", "project"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	in, beside := filepath.Join(root, "journals"), filepath.Join(base, "project")
	for _, tc := range []struct {
		name          string
		workDir, home string
		grants        []string
		subject       string // "" means accepted
	}{
		{"workdir in it", in, "", nil, "workdir"},
		{"home is it", "", root, nil, "home"},
		{"grant in it", "", "", []string{beside, in}, "grant"},
		{"grant holding it", "", "", []string{base}, ""},
		{"beside it", beside, beside, []string{beside}, ""},
		{"none", "", "", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := StatePlaces(root, tc.workDir, tc.home, tc.grants)
			var e *Error
			switch {
			case tc.subject == "" && err != nil:
				t.Fatalf("StatePlaces = %v, want nil", err)
			case tc.subject != "" && (!errors.As(err, &e) || e.Subject != tc.subject || !strings.Contains(e.Problem, "state directory")):
				t.Fatalf("StatePlaces = %v, want a %s refused in the state directory", err, tc.subject)
			}
		})
	}
}

// A grant of the root is refused; others are left to their own checks.
func TestGrants(t *testing.T) {
	for _, tc := range []struct {
		grants []string
		refuse bool
	}{
		{[]string{"/"}, true},
		{[]string{"/usr", "/"}, true},
		{[]string{"/usr", "/opt/x"}, false},
		{nil, false},
	} {
		err := Grants(tc.grants)
		if (err != nil) != tc.refuse {
			t.Errorf("Grants(%q) = %v, want refused %v", tc.grants, err, tc.refuse)
		}
	}
}
