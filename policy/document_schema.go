package policy

import (
	"encoding/json"
)

// SchemaDraft is the JSON Schema dialect of [DocumentSchema].
const SchemaDraft = "https://json-schema.org/draft/2020-12/schema"

// DocumentSchema returns the JSON Schema (draft 2020-12) of a policy
// document, indented, with a final newline. It is generated from the
// table the decoder checks documents against, so a document the schema
// describes is one [ParseDocument] reads field for field: every object
// with fixed keys has "additionalProperties": false, and "command" is
// required. The three maps with free keys (grants, env.set,
// filesystem.virtual) constrain their values and, where it is a rule of
// the decoder, their keys. What JSON Schema cannot say (that a domain
// parses, that an allow list has domains) is checked by the decoder
// only; "enabled" is the constant true.
func DocumentSchema() []byte {
	s := objectSchema(documentFields)
	if e, ok := s["properties"].(map[string]any)["enabled"].(map[string]any); ok {
		e["const"] = true
	}
	s["$schema"] = SchemaDraft
	s["title"] = "moat policy document"
	s["description"] = "A sandbox policy for moat exec --policy. Every field but command is optional; an empty policy still sandboxes: no network, the cwd read-only, no host variables."
	s["required"] = []string{"command"}
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		panic(err) // only maps, strings, numbers and booleans: cannot fail
	}
	return append(out, '\n')
}

// objectSchema is the schema of a closed object of fields.
func objectSchema(fields []field) map[string]any {
	props := map[string]any{}
	for _, f := range fields {
		props[f.name] = fieldSchema(f)
	}
	return map[string]any{
		"type":                 "object",
		"additionalProperties": false,
		"properties":           props,
	}
}

// fieldSchema is the schema of one field's value.
func fieldSchema(f field) map[string]any {
	var s map[string]any
	switch f.kind {
	case kindString:
		s = map[string]any{"type": "string"}
	case kindStrings:
		s = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
		if f.minItems > 0 {
			s["minItems"] = f.minItems
		}
	case kindBool:
		s = map[string]any{"type": "boolean"}
	case kindEnum:
		s = map[string]any{"type": "string", "enum": f.enum}
	case kindObject:
		s = objectSchema(f.fields)
	case kindStringMap:
		s = map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}
		switch f.name {
		case "virtual":
			s["propertyNames"] = map[string]any{"pattern": "^/"}
		case "set":
			s["propertyNames"] = map[string]any{"pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}
		}
	case kindEnumMap:
		s = map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string", "enum": f.enum}}
	case kindSize, kindCount, kindDuration:
		s = map[string]any{"type": []string{"integer", "string"}, "minimum": 0}
	case kindInteger:
		s = map[string]any{"type": "integer", "minimum": f.min, "maximum": f.max}
	}
	if f.doc != "" {
		s["description"] = f.doc
	}
	return s
}
