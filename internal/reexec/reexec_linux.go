package reexec

import (
	"os"

	"github.com/moat-sandbox/moat/internal/backend/linux"
)

func init() {
	if role := os.Getenv(linux.HelperEnv); role != "" {
		linux.HelperMain(role) // never returns
	}
}
