//go:build !linux && !darwin

package reexec

import (
	"os"

	"github.com/moat-sandbox/moat/internal/fileserve"
)

func init() {
	if os.Getenv(fileserve.Env) == "1" {
		fileserve.Main() // a session's file server: never returns
	}
}
