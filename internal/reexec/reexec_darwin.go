package reexec

import (
	"os"

	"github.com/moat-sandbox/moat/internal/backend/darwin"
)

func init() {
	if role := os.Getenv(darwin.HelperEnv); role != "" {
		darwin.HelperMain(role) // never returns
	}
}
