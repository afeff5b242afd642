package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/moat-sandbox/moat"
)

// The library names a setting by its Config field and carries its id; the
// command names it by its flag, once, and adds the one "moat: " prefix.
func TestErrorLineNamesTheFlag(t *testing.T) {
	refused := errors.New(`workdir "/home/u": is your home; pass Config.AllowHomeWorkDir to allow it`)
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"plain", errors.New("grant \"/x\": no access"), `moat: grant "/x": no access`},
		{"setting", &moat.SettingError{Setting: "workdir.allow-home", Err: refused},
			`moat: workdir "/home/u": is your home; pass --allow-home-workdir (Config.AllowHomeWorkDir) to allow it`},
		{"wrapped setting", fmt.Errorf("run: %w", &moat.SettingError{Setting: "home", Err: errors.New("home \"/h\": --home names Config.Home")}),
			`moat: run: home "/h": --home names --home (Config.Home)`},
		{"unknown setting", &moat.SettingError{Setting: "no.such", Err: refused}, "moat: " + refused.Error()},
		{"usage", usagef("%s", &moat.SettingError{Setting: "workdir.allow-home", Err: refused}),
			`moat: workdir "/home/u": is your home; pass --allow-home-workdir (Config.AllowHomeWorkDir) to allow it`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := errorLine(tc.err); got != tc.want {
				t.Errorf("errorLine = %q, want %q", got, tc.want)
			}
		})
	}
	if !errors.Is(&moat.SettingError{Setting: "home", Err: moat.ErrUnsafeWorkDir}, moat.ErrUnsafeWorkDir) {
		t.Error("SettingError hides its cause from errors.Is")
	}
}
