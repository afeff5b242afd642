package redact

import (
	"errors"
	"strings"
	"testing"
)

// TestOpen: the rules engine is always there; the model engine, absent in
// a default build, is a clear error naming the build tag and moat setup.
func TestOpen(t *testing.T) {
	d, err := Open(EngineRules, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.(*Rules); !ok {
		t.Fatalf("Open(rules) = %T", d)
	}
	if _, err := Open("nonesuch", Options{}); !errors.Is(err, ErrEngineUnavailable) || !strings.Contains(err.Error(), `"nonesuch"`) {
		t.Fatalf("unknown engine: %v", err)
	}
	if has(Engines(), EngineModel) {
		t.Skip("this binary has the model engine (built with -tags " + ModelBuildTag + ")")
	}
	_, err = Open(EngineModel, Options{})
	if !errors.Is(err, ErrEngineUnavailable) {
		t.Fatalf("Open(model) = %v; want ErrEngineUnavailable", err)
	}
	for _, want := range []string{"redact engine unavailable", "-tags " + ModelBuildTag, "moat setup", "cgo"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Open(model) error %q lacks %q", err, want)
		}
	}
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestRegister: a registered engine opens with the options given; an
// empty or duplicate registration panics.
func TestRegister(t *testing.T) {
	var seen Options
	Register("test-engine", func(o Options) (Detector, error) {
		seen = o
		return DetectorFunc(func(string) ([]Finding, error) { return nil, nil }), nil
	})
	defer func() {
		enginesMu.Lock()
		delete(engines, "test-engine")
		enginesMu.Unlock()
	}()
	if _, err := Open("test-engine", Options{Variant: "fp16", CacheDir: "c"}); err != nil {
		t.Fatal(err)
	}
	if seen.Variant != "fp16" || seen.CacheDir != "c" {
		t.Fatalf("opener saw %+v", seen)
	}
	for _, tc := range []struct {
		name string
		fn   func()
	}{
		{"duplicate", func() { Register("test-engine", func(Options) (Detector, error) { return nil, nil }) }},
		{"empty name", func() { Register("", func(Options) (Detector, error) { return nil, nil }) }},
		{"nil opener", func() { Register("x", nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			tc.fn()
		})
	}
}

// TestUnion: findings of every engine, the first error stops.
func TestUnion(t *testing.T) {
	a := DetectorFunc(func(string) ([]Finding, error) { return []Finding{{0, 1, "a", ""}}, nil })
	b := DetectorFunc(func(string) ([]Finding, error) { return []Finding{{2, 3, "b", ""}}, nil })
	bad := DetectorFunc(func(string) ([]Finding, error) { return nil, errBoom })
	got, err := Union(a, b).Detect("abcd")
	if err != nil || len(got) != 2 {
		t.Fatalf("Union = %v, %v", got, err)
	}
	if _, err := Union(a, bad, b).Detect("abcd"); !errors.Is(err, errBoom) {
		t.Fatalf("Union error = %v", err)
	}
}
