package moat

import (
	"errors"
	"testing"
)

func TestUnsupportedSettingError(t *testing.T) {
	e := &UnsupportedSettingError{Platform: "windows", Setting: "isolation", Value: "permissive", Reason: "an AppContainer cannot make the whole filesystem writable"}
	want := "isolation permissive: not available on windows: an AppContainer cannot make the whole filesystem writable"
	if e.Error() != want {
		t.Errorf("%q, want %q", e.Error(), want)
	}
	var err error = e
	if !errors.Is(err, ErrUnsupported) {
		t.Error("does not match ErrUnsupported")
	}
	if errors.Is(err, ErrInvalidConfig) {
		t.Error("matches ErrInvalidConfig")
	}
}
