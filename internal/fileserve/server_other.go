//go:build !linux && !darwin

package fileserve

import "errors"

// server is unavailable off Linux and macOS: every call is refused.
type server struct{}

func open(Config) (*server, error) {
	return nil, errors.New("the file server runs only on Linux and macOS")
}

func (s *server) handle(Request) Reply { return Reply{Error: &Fault{Code: CodeInternal}} }

func ignoreFileSizeSignal() {}
