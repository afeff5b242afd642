package policy

import (
	"reflect"
	"strings"
	"testing"
)

// FuzzPolicyDocument: no input makes ParseDocument panic; every refusal
// is one line; an accepted document re-encodes (MarshalJSON) to one that
// reads back to the same Document, whose settings merge to the same
// Config, network and grants.
func FuzzPolicyDocument(f *testing.F) {
	for _, doc := range []string{
		`{"command":["true"]}`,
		`{"cwd":".","command":["true"]}`,
		`{"command":["sh","-c","x"],"cwd":"~/p","stdio":"piped","network":"host","proc":"none","enabled":true,"sshAgent":true,"gpgAgent":false,"ageAgent":true}`,
		`{"command":["x"],"env":{"allow":["A","S"],"deny":["S"],"set":{"B":"2"}}}`,
		`{"command":["x"],"env":{"deny":[]}}`,
		`{"command":["x"],"filesystem":{"deny":["**/.env*","!**/.env.example"],"writable":["src/**"],"virtual":{"/etc/passwd":"nobody\n"}}}`,
		`{"command":["x"],"network":"allow-list","allowDomains":["PyPI.org.","*.x.io:443"],"allowLocal":["::1"],"auditLog":"a","auditRotate":"daily"}`,
		`{"command":["x"],"grants":{"/z":"xr","~/d":"r"},"protections":{"allowGPU":true,"protectCredentials":false}}`,
		`{"command":["x"],"limits":{"memory":"1.5G","cpuTime":"unlimited","timeout":"1h2m","nice":19,"ioPriority":"utility","disk":0}}`,
		`{"command":["x"],"isolation":"permissive","enforcement":"best-effort","build":false}`,
		`{"command":["x"],"bogus":1}`,
		`{"command":["x"],"network":"none","network":"none"}`,
		`[]`, `{`, `{"command":[]}`, `{"command":["x"],"enabled":false}`,
		`{"command":["x"],"limits":{"memory":1e3}}`,
		"{\"command\":[\"\xff\"]}",
	} {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDocument(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q spans lines", err)
			}
			return
		}
		if len(d.Command) == 0 || d.Command[0] == "" {
			t.Fatalf("accepted a document without a command: %+v", d)
		}
		for p := range d.Filesystem.Virtual {
			if !strings.HasPrefix(p, "/") {
				t.Fatalf("accepted a relative virtual target %q", p)
			}
		}
		b, err := d.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		again, err := ParseDocument(b)
		if err != nil {
			t.Fatalf("re-encoded %s is refused: %v", b, err)
		}
		if !documentsEqual(d, again) {
			t.Fatalf("re-encoded %s reads as\n%+v\nnot\n%+v", b, *again, *d)
		}
		r1, err1 := Merge(d.layer())
		r2, err2 := Merge(again.layer())
		if err1 != nil || err2 != nil {
			t.Fatalf("an accepted document does not merge: %v, %v", err1, err2)
		}
		if !reflect.DeepEqual(r1.Config, r2.Config) || !reflect.DeepEqual(r1.Network, r2.Network) || !reflect.DeepEqual(r1.Grants, r2.Grants) {
			t.Fatalf("the re-encoded document merges to another Config:\n%+v\n%+v", r1, r2)
		}
	})
}

// FuzzExpandPath: ExpandPath never panics, leaves a path without ~ or $
// as it is, and never leaves a $NAME of a set variable behind.
func FuzzExpandPath(f *testing.F) {
	for _, s := range []string{"~", "~/a", "$HOME/x", "${P}y", "a$", "${", "$1", "~u", "/p"} {
		f.Add(s)
	}
	env := []string{"HOME=/h", "P=v"}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ExpandPath(s, env)
		if err != nil {
			return
		}
		if !strings.ContainsAny(s, "~$") && got != s {
			t.Fatalf("ExpandPath(%q) = %q, want it unchanged", s, got)
		}
	})
}

// FuzzGpgconfDirs: any output of gpgconf parses without a panic, and
// only socket lines give paths.
func FuzzGpgconfDirs(f *testing.F) {
	f.Add("agent-socket:/a%3ab\nhomedir:/h\n")
	f.Add("dirmngr-socket:%\n")
	f.Fuzz(func(t *testing.T, out string) {
		n := 0
		for line := range strings.SplitSeq(out, "\n") {
			if k, _, ok := strings.Cut(strings.TrimRight(line, "\r"), ":"); ok && contains(gpgconfSocketKeys, k) {
				n++
			}
		}
		if got := parseGpgconfDirs(out); len(got) > n {
			t.Fatalf("%d paths from %d socket lines", len(got), n)
		}
	})
}
