package policy

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestParseHomeKey(t *testing.T) {
	t.Setenv("HOME", "/home/user")
	dir, _ := filepath.Abs(".")
	tests := []struct {
		name, doc, want, wantErr string
	}{
		{name: "absent", doc: "network = \"deny\"\n", want: ""},
		{name: "absolute", doc: "home = \"/srv/cache/home\"\n", want: "/srv/cache/home"},
		{name: "relative to the file", doc: "home = \"./h\"\n", want: filepath.Join(dir, "h")},
		{name: "tilde", doc: "home = \"~/.moat-home\"\n", want: "/home/user/.moat-home"},
		{name: "not a string", doc: "home = 1\n", wantErr: "home: want"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("x.toml", []byte(tt.doc))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.Home != tt.want {
				t.Errorf("Home = %q, want %q", f.Home, tt.want)
			}
			r, err := Merge(f.Layer)
			if err != nil || r.Home != tt.want {
				t.Errorf("merged Home = %q, %v; want %q", r.Home, err, tt.want)
			}
		})
	}
}
