package reexec

import (
	"os"

	"github.com/moat-sandbox/moat/internal/backend/linux"
	"github.com/moat-sandbox/moat/internal/fileserve"
)

func init() {
	if role := os.Getenv(linux.HelperEnv); role != "" {
		linux.HelperMain(role) // never returns
	}
	if os.Getenv(fileserve.Env) == "1" {
		fileserve.Main() // a session's file server: never returns
	}
}
