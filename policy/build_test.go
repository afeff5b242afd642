package policy

import (
	"errors"
	"testing"
)

func TestParseBuild(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		want    *bool
		wantErr string
	}{
		{name: "absent stays unset", doc: "network = \"deny\"\n", want: nil},
		{name: "on", doc: "build = true\n", want: ptr(true)},
		{name: "off", doc: "build = false\n", want: ptr(false)},
		{name: "string", doc: "\nbuild = \"yes\"\n", wantErr: `config "x.toml": line 2: build: want true or false, not a string`},
		{name: "integer", doc: "build = 1\n", wantErr: `config "x.toml": line 1: build: want true or false, not an integer`},
		{name: "table", doc: "[build]\non = true\n", wantErr: `config "x.toml": line 1: build: want true or false, not a table`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("x.toml", []byte(tt.doc))
			if tt.wantErr != "" {
				var pe *Error
				if err == nil || err.Error() != tt.wantErr || !errors.As(err, &pe) {
					t.Fatalf("error = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (f.Build == nil) != (tt.want == nil) || (f.Build != nil && *f.Build != *tt.want) {
				t.Errorf("Build = %v, want %v", f.Build, tt.want)
			}
		})
	}
}

func TestMergeBuild(t *testing.T) {
	tests := []struct {
		name   string
		layers []Layer
		want   bool
	}{
		{name: "no layer: off", layers: []Layer{{}}, want: false},
		{name: "file on", layers: []Layer{{Build: ptr(true)}, {}}, want: true},
		{name: "flag beats file", layers: []Layer{{Build: ptr(true)}, {Build: ptr(false)}}, want: false},
		{name: "flag turns it on", layers: []Layer{{Build: ptr(false)}, {Build: ptr(true)}}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Merge(tt.layers...)
			if err != nil {
				t.Fatal(err)
			}
			if r.Config.Build != tt.want {
				t.Errorf("Config.Build = %v, want %v", r.Config.Build, tt.want)
			}
		})
	}
}

// FuzzParseBuild: any value of build is either accepted as a boolean or
// rejected with an *Error.
func FuzzParseBuild(f *testing.F) {
	for _, v := range []string{"true", "false", "\"true\"", "1", "[]", "{}", "tru", "2026-01-01"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		file, err := Parse("x.toml", []byte("build = "+v+"\n"))
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not an *Error", err)
			}
			return
		}
		if file.Build == nil {
			t.Fatalf("build = %s accepted without setting Build", v)
		}
	})
}
