package proxy

import (
	"errors"
	"fmt"
)

// ErrServerClosed is returned by Serve once Close has been called.
var ErrServerClosed = errors.New("moat: proxy: server closed")

// ErrAuditFull, returned (or wrapped) by Config.Audit for an allowed
// decision, refuses the connection with the reason "audit log full": the
// log can no longer record where it goes. Any other error refuses it with
// "audit log write failed".
var ErrAuditFull = errors.New("moat: proxy: audit log full")

// errorf formats an error in moat's "moat: subject: problem" style.
func errorf(format string, args ...any) error {
	return fmt.Errorf("moat: "+format, args...)
}
