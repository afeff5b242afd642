package serve

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// Bytes is bytes on the wire: {"text": "..."} when they are valid UTF-8,
// {"base64": "..."} otherwise, never both. The zero value is no bytes,
// written {"text": ""}.
type Bytes []byte

type bytesWire struct {
	Text   *string `json:"text,omitempty"`
	Base64 *string `json:"base64,omitempty"`
}

// MarshalJSON writes text when b is valid UTF-8, else base64.
func (b Bytes) MarshalJSON() ([]byte, error) {
	if utf8.Valid(b) {
		s := string(b)
		return json.Marshal(bytesWire{Text: &s})
	}
	s := base64.StdEncoding.EncodeToString(b)
	return json.Marshal(bytesWire{Base64: &s})
}

// UnmarshalJSON reads exactly one of text or base64, and nothing else.
func (b *Bytes) UnmarshalJSON(data []byte) error {
	var w bytesWire
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return err
	}
	switch {
	case w.Text != nil && w.Base64 != nil:
		return errors.New(`bytes: "text" and "base64" both given; send one`)
	case w.Text != nil:
		*b = Bytes(*w.Text)
	case w.Base64 != nil:
		raw, err := base64.StdEncoding.DecodeString(*w.Base64)
		if err != nil {
			return errors.New(`bytes: "base64" is not standard base64`)
		}
		*b = raw
	default:
		return errors.New(`bytes: want {"text": ...} or {"base64": ...}`)
	}
	return nil
}
