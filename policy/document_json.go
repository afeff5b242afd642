package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// maxDocumentDepth bounds how deeply a policy document nests. The deepest
// field is two objects down (limits.memory); anything deeper is refused
// by the closed fields long before this bound, which only keeps the
// reader's recursion small.
const maxDocumentDepth = 16

// jnode is one JSON value of a policy document, with the keys of an
// object in the order written, so a duplicated key can be refused and
// lists keep their order.
type jnode struct {
	kind  byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' boolean, 'z' null
	keys  []string
	vals  []*jnode
	items []*jnode
	str   string
	num   json.Number
	b     bool
}

// typeName describes n's JSON type for a message.
func (n *jnode) typeName() string {
	switch n.kind {
	case 'o':
		return "an object"
	case 'a':
		return "an array"
	case 's':
		return "a string"
	case 'n':
		return "a number"
	case 'b':
		return "a boolean"
	}
	return "null"
}

// readJSON reads exactly one JSON value from data. A key given twice in
// one object is an error, since a closed document must not be read two
// ways; so is anything after the value.
func readJSON(data []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := readValue(dec, 0, "")
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: more after the document")
	}
	return n, nil
}

// readValue reads the next value of dec; path names it in errors.
func readValue(dec *json.Decoder, depth int, path string) (*jnode, error) {
	if depth > maxDocumentDepth {
		return nil, errors.New("invalid JSON: nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonError(err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &jnode{kind: 'o'}
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, jsonError(err)
				}
				k, ok := kt.(string)
				if !ok {
					return nil, errors.New("invalid JSON: an object key is not a string")
				}
				if seen[k] {
					return nil, fmt.Errorf("duplicate policy field: %s", path+k)
				}
				seen[k] = true
				v, err := readValue(dec, depth+1, path+k+".")
				if err != nil {
					return nil, err
				}
				n.keys, n.vals = append(n.keys, k), append(n.vals, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, jsonError(err)
			}
			return n, nil
		case '[':
			n := &jnode{kind: 'a'}
			for dec.More() {
				v, err := readValue(dec, depth+1, path)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, jsonError(err)
			}
			return n, nil
		}
		return nil, errors.New("invalid JSON")
	case string:
		return &jnode{kind: 's', str: t}, nil
	case json.Number:
		return &jnode{kind: 'n', num: t}, nil
	case bool:
		return &jnode{kind: 'b', b: t}, nil
	case nil:
		return &jnode{kind: 'z'}, nil
	}
	return nil, errors.New("invalid JSON")
}

// jsonError words a decoder error for the policy's message.
func jsonError(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errors.New("invalid JSON: unexpected end of the document")
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("invalid JSON at byte %d: %s", se.Offset, se.Error())
	}
	return fmt.Errorf("invalid JSON: %w", err)
}
