package policy

import (
	"errors"
	"strconv"
	"testing"

	"github.com/moat-sandbox/moat"
)

// TestNiceIsMoatsRange: the config file and the flags accept exactly the
// steps moat.New accepts, and refuse the others in moat's words.
func TestNiceIsMoatsRange(t *testing.T) {
	for n := -3; n <= moat.MaxNice+3; n++ {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			moatErr := moat.Config{Nice: n}.Validate()
			got, err := ParseNice(strconv.Itoa(n))
			if (err == nil) != (moatErr == nil) || err == nil && got != n {
				t.Fatalf("ParseNice(%d) = %d, %v; moat says %v", n, got, err, moatErr)
			}
			doc := "[limits]\nnice = " + strconv.Itoa(n) + "\n"
			_, ferr := Parse("x.toml", []byte(doc))
			if (ferr == nil) != (moatErr == nil) {
				t.Fatalf("file nice = %d: %v; moat says %v", n, ferr, moatErr)
			}
			if moatErr == nil {
				return
			}
			var ce *moat.ConfigError
			if !errors.As(moatErr, &ce) || err.Error() != ce.Problem {
				t.Errorf("ParseNice's problem %q, moat's %v", err, moatErr)
			}
			if want := `config "x.toml": line 2: limits.nice ` + strconv.Itoa(n) + ": " + ce.Problem; ferr.Error() != want {
				t.Errorf("file error %q, want %q", ferr, want)
			}
		})
	}
	if _, err := Parse("x.toml", []byte("[limits]\nnice = 9223372036854775807\n")); err == nil {
		t.Error("a nice past any int's range was accepted")
	}
}

func TestParseIOPriority(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want moat.IOPriority
		ok   bool
	}{
		{"utility", moat.IOPriorityUtility, true},
		{"background", moat.IOPriorityBackground, true},
		{"default", moat.IOPriorityDefault, true},
		{"", 0, false},
		{"fast", 0, false},
		{"Utility", 0, false},
	} {
		got, err := ParseIOPriority(tt.in)
		if (err == nil) != tt.ok || got != tt.want || err != nil && err.Error() != "want utility or background" {
			t.Errorf("ParseIOPriority(%q) = %v, %v", tt.in, got, err)
		}
		if err == nil {
			if verr := (moat.Config{IOPriority: got}).Validate(); verr != nil {
				t.Errorf("ParseIOPriority(%q) = %v, which moat refuses: %v", tt.in, got, verr)
			}
		}
	}
}
