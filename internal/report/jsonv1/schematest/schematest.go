// Package schematest validates report documents against the published
// JSON Schema, docs/report-json.schema.json, for the tests of the packages
// that write them. Only tests import it.
package schematest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SchemaPath is the schema's place in the module.
const SchemaPath = "docs/report-json.schema.json"

var (
	once     sync.Once
	compiled *jsonschema.Schema
	loadErr  error
)

// moduleRoot finds the directory holding go.mod above this source file,
// or else above the current directory (a test binary run elsewhere).
func moduleRoot() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok {
		if root, err := rootAbove(filepath.Dir(file)); err == nil {
			return root, nil
		}
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return rootAbove(dir)
}

// rootAbove finds the directory holding go.mod at or above dir.
func rootAbove(dir string) (string, error) {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the current directory")
		}
		dir = parent
	}
}

// schema compiles the schema once.
func schema() (*jsonschema.Schema, error) {
	once.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			loadErr = err
			return
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		compiled, loadErr = c.Compile(filepath.Join(root, SchemaPath))
	})
	return compiled, loadErr
}

// Validate reports why data, one JSON document, does not conform to the
// schema, or nil.
func Validate(data []byte) error {
	s, err := schema()
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// ModuleFile returns the path of rel, a file of the module such as
// "docs/report-json.md".
func ModuleFile(rel string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, rel), nil
}
