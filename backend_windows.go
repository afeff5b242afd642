package moat

import (
	"errors"

	"github.com/moat-sandbox/moat/internal/backend/windows"
	"github.com/moat-sandbox/moat/internal/spec"
)

// prestarted is a backend helper started before the policy is known;
// Windows has none.
type prestarted = *struct{}

// prestartBackend starts nothing here.
func prestartBackend() prestarted { return nil }

// newBackend is Windows's backend: an AppContainer, access entries for its
// SID, a job object. A setting Windows cannot honour at all is an
// *UnsupportedSettingError.
func newBackend(p spec.Policy, _ prestarted) (spec.Backend, error) {
	e, err := windows.New(p)
	var se *windows.SettingError
	if errors.As(err, &se) {
		return nil, &UnsupportedSettingError{Platform: "windows", Setting: se.Setting, Value: se.Value, Reason: se.Reason}
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

// closePrestarted has nothing to end here.
func closePrestarted(prestarted) {}
