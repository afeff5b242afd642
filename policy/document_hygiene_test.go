package policy

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDocumentErrorsQuoteOddSubjects: a key, pattern, virtual target or
// cwd holding a control character reaches the message quoted, never raw;
// a plain key keeps Heimdall's wording.
func TestDocumentErrorsQuoteOddSubjects(t *testing.T) {
	for _, tt := range []struct {
		name, doc, want string
	}{
		{"plain unknown key", `{"command":["true"],"bogus":1}`, "unknown policy field: bogus"},
		{"unknown key with escape", `{"command":["true"],"bo\u001b[2Jgus":1}`, `unknown policy field: "bo\x1b[2Jgus"`},
		{"nested unknown key with escape", `{"command":["true"],"filesystem":{"x\u0007":[]}}`, `unknown policy field: "filesystem.x\a"`},
		{"pattern with escape", `{"command":["true"],"filesystem":{"deny":["a[\u001b"]}}`, `invalid filesystem pattern "a[\x1b"`},
		{"virtual target with escape", `{"command":["true"],"filesystem":{"virtual":{"x\u001b":"y"}}}`, `filesystem.virtual target "x\x1b" must be absolute`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseDocument([]byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %s", err, tt.want)
			}
			for _, r := range err.Error() {
				if r < 0x20 || r == 0x7f {
					t.Fatalf("err %q holds a raw control character", err)
				}
			}
		})
	}
	d := &Document{Command: []string{"true"}, Cwd: "/nonexistent\x1b[2J"}
	if _, err := d.cwd(ExecHost{Dir: "/"}, ""); err == nil || strings.ContainsRune(err.Error(), 0x1b) {
		t.Errorf("cwd error %q holds a raw escape", err)
	}
}

// TestDocumentSchemaEnabledConst: the schema says what the decoder
// accepts of "enabled": true only.
func TestDocumentSchemaEnabledConst(t *testing.T) {
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(DocumentSchema(), &s); err != nil {
		t.Fatal(err)
	}
	if c, ok := s.Properties["enabled"]["const"]; !ok || c != true {
		t.Errorf("enabled = %v, want \"const\": true", s.Properties["enabled"])
	}
	if _, err := ParseDocument([]byte(`{"command":["true"],"enabled":false}`)); err == nil {
		t.Error("the decoder accepted enabled false")
	}
}
