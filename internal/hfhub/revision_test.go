package hfhub

import (
	"strings"
	"testing"
)

func TestParsePathsInfo(t *testing.T) {
	sha1 := strings.Repeat("a", 40)
	sha256 := strings.Repeat("b", 64)
	tests := []struct {
		name, body string
		size       int64
		hash, err  string
	}{
		{"plain file", `[{"type":"file","path":"f","oid":"` + sha1 + `","size":5}]`, 5, sha1, ""},
		{"LFS file", `[{"type":"file","path":"f","oid":"` + sha1 + `","size":134,"lfs":{"oid":"` + sha256 + `","size":9,"pointerSize":134}}]`, 9, sha256, ""},
		{"upper-case hash", `[{"type":"file","path":"f","oid":"` + strings.ToUpper(sha1) + `","size":5}]`, 5, sha1, ""},
		{"other paths ignored", `[{"type":"file","path":"g","oid":"x","size":-1},{"type":"file","path":"f","oid":"` + sha1 + `","size":5}]`, 5, sha1, ""},
		{"missing", `[]`, 0, "", "not in it"},
		{"directory", `[{"type":"directory","path":"f","oid":"` + sha1 + `","size":0}]`, 0, "", "not a file"},
		{"twice", `[{"type":"file","path":"f","oid":"` + sha1 + `","size":5},{"type":"file","path":"f","oid":"` + sha1 + `","size":6}]`, 0, "", "twice"},
		{"no size", `[{"type":"file","path":"f","oid":"` + sha1 + `"}]`, 0, "", "malformed"},
		{"negative size", `[{"type":"file","path":"f","oid":"` + sha1 + `","size":-1}]`, 0, "", "malformed"},
		{"short oid", `[{"type":"file","path":"f","oid":"abc","size":5}]`, 0, "", "malformed"},
		{"LFS with sha1", `[{"type":"file","path":"f","oid":"` + sha1 + `","size":5,"lfs":{"oid":"` + sha1 + `","size":5}}]`, 0, "", "malformed LFS"},
		{"LFS without size", `[{"type":"file","path":"f","oid":"` + sha1 + `","size":5,"lfs":{"oid":"` + sha256 + `"}}]`, 0, "", "malformed LFS"},
		{"huge size", `[{"type":"file","path":"f","oid":"` + sha1 + `","size":1e30}]`, 0, "", "JSON"},
		{"object, not list", `{"type":"file"}`, 0, "", "JSON"},
		{"not JSON", `<html>`, 0, "", "JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fi, err := parsePathsInfo([]byte(tc.body), "f")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || fi.size != tc.size || fi.hash != tc.hash {
				t.Fatalf("got %+v %v, want %d %s", fi, err, tc.size, tc.hash)
			}
		})
	}
}

// FuzzParsePathsInfo: whatever the hub answers, the parser returns an error
// or a non-negative size with a 40- or 64-digit lower-case hex hash.
func FuzzParsePathsInfo(f *testing.F) {
	f.Add([]byte(`[{"type":"file","path":"f","oid":"`+strings.Repeat("a", 40)+`","size":5}]`), "f")
	f.Add([]byte(`[{"type":"file","path":"f","oid":"x","size":134,"lfs":{"oid":"`+strings.Repeat("b", 64)+`","size":9}}]`), "f")
	f.Add([]byte(`[{},{"path":"f"}]`), "f")
	f.Fuzz(func(t *testing.T, body []byte, file string) {
		fi, err := parsePathsInfo(body, file)
		if err != nil {
			return
		}
		if fi.size < 0 || !(isHex(fi.hash, 40) || isHex(fi.hash, 64)) || fi.hash != strings.ToLower(fi.hash) {
			t.Fatalf("accepted %+v", fi)
		}
	})
}
