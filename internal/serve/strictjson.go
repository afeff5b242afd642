package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// maxJSONDepth bounds how deeply a request body nests; every request
// type is a few levels deep.
const maxJSONDepth = 32

// checkKeys walks the first JSON value of body against the Go type t and
// refuses, naming the key, what encoding/json would quietly accept: a key
// given twice in one object (the last would win), and a key of a struct
// that is not exactly one of its JSON field names (encoding/json matches
// them case-insensitively). A map's keys are free-form but still unique.
// Syntax errors are left for the decoder to report.
func checkKeys(body []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	err := walkJSON(dec, t, "", 0)
	var ke *keyError
	if errors.As(err, &ke) {
		return err
	}
	return nil
}

// keyError is a refused key.
type keyError struct{ msg string }

func (e *keyError) Error() string { return e.msg }

// bytesWireType is what a Bytes reads: its JSON object's shape.
var bytesWireType = reflect.TypeOf(bytesWire{})

// walkJSON reads one value from dec; t is the Go type it decodes into, or
// nil where any keys are allowed; at names the value for a message.
func walkJSON(dec *json.Decoder, t reflect.Type, at string, depth int) error {
	if depth > maxJSONDepth {
		return &keyError{fmt.Sprintf("the request body nests deeper than %d levels", maxJSONDepth)}
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil // a scalar
	}
	t = shapeOf(t)
	if d == '[' {
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := walkJSON(dec, elem, fmt.Sprintf("%s[%d]", at, i), depth+1); err != nil {
				return err
			}
		}
		_, err := dec.Token()
		return err
	}
	// An object: a struct's fields, or a map's free-form keys.
	var fields map[string]reflect.Type
	var elem reflect.Type
	switch {
	case t != nil && t.Kind() == reflect.Struct:
		fields = jsonFields(t)
	case t != nil && t.Kind() == reflect.Map:
		elem = t.Elem()
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		name := joinKey(at, key)
		if seen[key] {
			return &keyError{fmt.Sprintf("key %q is given twice; send each key once", trimmed(name))}
		}
		seen[key] = true
		vt := elem
		if fields != nil {
			ft, ok := fields[key]
			if !ok {
				return &keyError{unknownKey(name, key, fields)}
			}
			vt = ft
		}
		if err := walkJSON(dec, vt, name, depth+1); err != nil {
			return err
		}
	}
	_, err = dec.Token()
	return err
}

// shapeOf is the type whose JSON shape t reads, pointers removed: a
// Bytes reads {"text"} or {"base64"}; any other type that decodes itself
// is free-form (nil).
func shapeOf(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return nil
	}
	if t == reflect.TypeOf(Bytes(nil)) {
		return bytesWireType
	}
	if reflect.PointerTo(t).Implements(reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()) {
		return nil
	}
	return t
}

// jsonFields maps the JSON names of struct t's fields, as encoding/json
// spells them, to their types; embedded structs without a name give
// their own fields.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					out[k] = v
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// unknownKey says a key is not one of fields, pointing at the field it
// differs from only in case.
func unknownKey(name, key string, fields map[string]reflect.Type) string {
	for f := range fields {
		if strings.EqualFold(f, key) {
			return fmt.Sprintf("unknown key %q; keys are case-sensitive: write %q", trimmed(name), f)
		}
	}
	return fmt.Sprintf("unknown key %q", trimmed(name))
}

// joinKey names key inside the value at.
func joinKey(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}
