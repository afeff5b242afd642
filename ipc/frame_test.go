package ipc

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// A request's command line decodes word by word, up to MaxArgs words: a
// frame of empty words must not become millions of strings on the host.
func TestArgListBounded(t *testing.T) {
	words := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat(`"",`, n), ",") + "]" }
	cases := []struct {
		name    string
		in      string
		want    int
		wantErr bool
	}{
		{"null", `null`, 0, false},
		{"empty", `[]`, 0, false},
		{"some", `["a","b"]`, 2, false},
		{"at the limit", words(MaxArgs), MaxArgs, false},
		{"past the limit", words(MaxArgs + 1), 0, true},
		{"not strings", `[1,2]`, 0, true},
		{"not an array", `"a"`, 0, true},
		{"unterminated", `["a"`, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var a argList
			err := json.Unmarshal([]byte(tc.in), &a)
			if (err != nil) != tc.wantErr || (err == nil && len(a) != tc.want) {
				t.Errorf("Unmarshal(%.40s) = %d words, %v; want %d, error %v", tc.in, len(a), err, tc.want, tc.wantErr)
			}
		})
	}
}

// Past MaxArgs words the parser refuses the call, and a usage error quotes
// at most the start of a long word.
func TestParseArgvBounds(t *testing.T) {
	r := NewRouter()
	type args struct {
		Words []string `json:"words"`
		N     int      `json:"n"`
	}
	if err := Register(r, "w", func(_ context.Context, a args, _ Call) (int, error) { return len(a.Words), nil }, Positional("words")); err != nil {
		t.Fatal(err)
	}
	c := r.cmds["w"]
	if _, err := c.parseArgv(make([]string, MaxArgs+1), nil); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("MaxArgs+1 words: %v", err)
	}
	long := strings.Repeat("x", 1<<20)
	_, err := c.parseArgv([]string{"--n", long}, nil)
	if err == nil || len(err.Error()) > 300 {
		t.Errorf("a 1 MiB bad value: error of %d bytes: %.100v", len(err.Error()), err)
	}
}
