package policy

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// documentKeyPaths are the fields a policy document has, written out by
// hand from Heimdall's table and moat's extensions (protections come from
// moat.SecurityOverrides and are checked against it separately), so that a
// field lost from, or added to, the decoder's table shows here.
var documentKeyPaths = []string{
	"command", "cwd", "stdio", "network", "proc",
	"env", "env.allow", "env.deny", "env.set",
	"filesystem", "filesystem.deny", "filesystem.writable", "filesystem.virtual", "filesystem.hardLinkGaps",
	"enabled", "sshAgent", "gpgAgent", "ageAgent",
	"allowDomains", "allowLocal", "auditLog", "auditRotate",
	"grants", "protections", "isolation",
	"limits", "limits.memory", "limits.cpuTime", "limits.fileSize", "limits.processes", "limits.openFiles",
	"limits.disk", "limits.diskInodes", "limits.timeout", "limits.nice", "limits.ioPriority",
	"enforcement", "build",
}

// schemaObject is a decoded schema.
type schemaObject = map[string]any

func decodedSchema(t *testing.T) schemaObject {
	t.Helper()
	var s schemaObject
	if err := json.Unmarshal(DocumentSchema(), &s); err != nil {
		t.Fatalf("the schema is not JSON: %v", err)
	}
	return s
}

// schemaPaths returns every property path of s, with its schema.
func schemaPaths(s schemaObject, prefix string, out map[string]schemaObject) {
	props, _ := s["properties"].(map[string]any)
	for k, v := range props {
		sub := v.(schemaObject)
		out[prefix+k] = sub
		schemaPaths(sub, prefix+k+".", out)
	}
}

func TestDocumentSchemaShape(t *testing.T) {
	s := decodedSchema(t)
	if s["$schema"] != SchemaDraft || SchemaDraft != "https://json-schema.org/draft/2020-12/schema" {
		t.Fatalf("$schema %v, want draft 2020-12", s["$schema"])
	}
	if !reflect.DeepEqual(s["required"], []any{"command"}) {
		t.Fatalf("required %v, want [command]", s["required"])
	}
	// additionalProperties false at every object level with fixed keys;
	// a map with free keys constrains its values instead.
	var walk func(path string, o schemaObject)
	walk = func(path string, o schemaObject) {
		if o["type"] != "object" {
			return
		}
		if _, fixed := o["properties"]; fixed {
			if o["additionalProperties"] != false {
				t.Errorf("%s: additionalProperties %v, want false", path, o["additionalProperties"])
			}
			for k, v := range o["properties"].(map[string]any) {
				walk(path+"."+k, v.(schemaObject))
			}
			return
		}
		if _, ok := o["additionalProperties"].(map[string]any); !ok {
			t.Errorf("%s: a map whose values are not constrained", path)
		}
	}
	walk("$", s)
	if _, ok := s["properties"].(map[string]any)["filesystem"]; !ok {
		t.Error("no filesystem property")
	}
}

// sampleValue is a valid value of the field at path, from its schema.
func sampleValue(path string, s schemaObject) any {
	special := map[string]any{
		"command":            []string{"true"},
		"cwd":                ".",
		"env.allow":          []string{"A"},
		"env.deny":           []string{"A"},
		"env.set":            map[string]string{"A": "1"},
		"allowDomains":       []string{"example.com"},
		"allowLocal":         []string{"10.0.0.0/8"},
		"auditLog":           "audit.jsonl",
		"grants":             map[string]string{"/usr": "r"},
		"filesystem.virtual": map[string]string{"/etc/x": "v"},
	}
	if v, ok := special[path]; ok {
		return v
	}
	if e, ok := s["enum"].([]any); ok {
		return e[0]
	}
	switch t := s["type"].(type) {
	case []any:
		return 1 // integer or string
	case string:
		switch t {
		case "string":
			return "x"
		case "boolean":
			return true
		case "integer":
			return s["minimum"]
		case "array":
			return []string{"x"}
		case "object":
			return map[string]any{}
		}
	}
	return nil
}

// companions are fields a sample needs beside it to be a valid document.
var companions = map[string]map[string]any{
	"allowDomains": {"network": NetworkAllowList},
	"allowLocal":   {"network": NetworkAllowAll},
	"auditLog":     {"network": NetworkAllowAll},
	"auditRotate":  {"network": NetworkAllowAll, "auditLog": "audit"},
}

// docWith builds a document with value at the dotted path, and the
// command.
func docWith(path string, value any) map[string]any {
	doc := map[string]any{"command": []string{"true"}}
	for k, v := range companions[path] {
		doc[k] = v
	}
	parts := strings.Split(path, ".")
	m := doc
	for _, p := range parts[:len(parts)-1] {
		sub, ok := m[p].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[p] = sub
		}
		m = sub
	}
	m[parts[len(parts)-1]] = value
	return doc
}

// TestDocumentSchemaMatchesDecoder: the schema's properties are exactly
// the fields written out above (and every protection switch of moat);
// the decoder accepts a document with each of them, and refuses an
// unknown key at every object level the schema closes.
func TestDocumentSchemaMatchesDecoder(t *testing.T) {
	paths := map[string]schemaObject{}
	schemaPaths(decodedSchema(t), "", paths)
	want := slices.Clone(documentKeyPaths)
	ov := reflect.TypeFor[moat.SecurityOverrides]()
	for i := range ov.NumField() {
		want = append(want, "protections."+lowerCamel(ov.Field(i).Name))
	}
	var got []string
	for p := range paths {
		got = append(got, p)
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Fatalf("schema properties\n%q\nwant\n%q", got, want)
	}
	for _, p := range got {
		s := paths[p]
		t.Run(p, func(t *testing.T) {
			doc := docWith(p, sampleValue(p, s))
			b, _ := json.Marshal(doc)
			if _, err := ParseDocument(b); err != nil {
				t.Fatalf("the decoder refuses %s: %v", b, err)
			}
			if s["type"] == "object" && s["properties"] != nil {
				doc := docWith(p+".bogusField", 1)
				b, _ := json.Marshal(doc)
				_, err := ParseDocument(b)
				if err == nil || err.Error() != "unknown policy field: "+p+".bogusField" {
					t.Fatalf("the decoder on %s: %v; want unknown policy field: %s.bogusField", b, err, p)
				}
			}
		})
	}
	// And at the top level.
	if _, err := ParseDocument([]byte(`{"command":["true"],"bogusField":1}`)); err == nil || err.Error() != "unknown policy field: bogusField" {
		t.Fatalf("top-level unknown key: %v", err)
	}
}
