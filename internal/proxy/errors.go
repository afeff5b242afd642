package proxy

import (
	"errors"
	"fmt"
)

// ErrServerClosed is returned by Serve once Close has been called.
var ErrServerClosed = errors.New("moat: proxy: server closed")

// errorf formats an error in moat's "moat: subject: problem" style.
func errorf(format string, args ...any) error {
	return fmt.Errorf("moat: "+format, args...)
}
