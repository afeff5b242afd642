package jsonv1

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/moat-sandbox/moat/internal/bytestr"
)

// MaxSize bounds a document that Parse reads: a sandbox names hosts and
// paths in refusals, but moat bounds how many it records.
const MaxSize = 16 << 20

// Marshal encodes d as indented JSON ending with a newline. Nil lists are
// written as empty ones, as the schema wants.
func Marshal(d Document) ([]byte, error) {
	if d.Refusals == nil {
		d.Refusals = []Refusal{}
	}
	for i := range d.Refusals {
		if d.Refusals[i].Args == nil {
			d.Refusals[i].Args = []string{}
		}
	}
	if d.Report != nil {
		r := *d.Report
		if r.Layers == nil {
			r.Layers = []Layer{}
		}
		if r.Gaps == nil {
			r.Gaps = []string{}
		}
		d.Report = &r
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	// A Linux name may hold any byte, which JSON text cannot: escape
	// such strings (internal/bytestr) rather than let encoding/json turn
	// them into U+FFFD, which would name another file.
	if err := enc.Encode(bytestr.Out(d)); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return b.Bytes(), nil
}

// Parse decodes a version 1 document, as a harness reads one: at most
// MaxSize bytes, one JSON object, whose "version" is 1. Fields it does not
// know are ignored (version 1 only grows).
func Parse(data []byte) (Document, error) {
	if len(data) > MaxSize {
		return Document{}, fmt.Errorf("report: %d bytes, more than %d", len(data), MaxSize)
	}
	var probe struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return Document{}, fmt.Errorf("report: %w", err)
	}
	if probe.Version == nil {
		return Document{}, errors.New("report: no version")
	}
	if *probe.Version != Version {
		return Document{}, fmt.Errorf("report: version %d, want %d", *probe.Version, Version)
	}
	var d Document
	if err := json.Unmarshal(data, &d); err != nil {
		return Document{}, fmt.Errorf("report: %w", err)
	}
	if d.Refusals == nil {
		return Document{}, errors.New("report: no refusals list")
	}
	return d, nil
}
