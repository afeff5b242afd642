package fileserve

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Main runs the file server on stdin and stdout and exits; the host's
// config is argv[2] (argv[1] labels the process). It is called from internal/reexec's init when [Env]
// is set, so it runs before the program's main and never returns.
func Main() {
	os.Unsetenv(Env)
	os.Exit(serve())
}

// serve answers requests until stdin ends (0) or breaks the protocol (2).
func serve() int {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "fileserve: want a label and the config")
		return 2
	}
	var cfg Config
	if err := Strict([]byte(os.Args[2]), &cfg); err != nil {
		fmt.Fprintf(os.Stderr, "fileserve: config: %v\n", err)
		return 2
	}
	ignoreFileSizeSignal() // a write past RLIMIT_FSIZE fails with EFBIG instead of killing us
	s, err := open(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fileserve: %v\n", err)
		return 2
	}
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	maxReq := cfg.MaxFileBytes/3*4 + 1<<20
	maxReply := ReplyBound(cfg.MaxReadBytes)
	for {
		b, err := ReadFrame(in, maxReq)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return 0
			}
			fmt.Fprintf(os.Stderr, "fileserve: request: %v\n", err)
			return 2
		}
		var req Request
		if err := Strict(b, &req); err != nil {
			fmt.Fprintf(os.Stderr, "fileserve: request: %v\n", err)
			return 2
		}
		rep := s.handle(req)
		rep.ID = req.ID
		if err := WriteFrame(out, rep, maxReply); err != nil {
			// A reply too large to send is our bug; say so instead.
			fallback := Reply{ID: req.ID, Error: &Fault{Code: CodeInternal}}
			if err := WriteFrame(out, fallback, maxReply); err != nil {
				return 2
			}
		}
		if err := out.Flush(); err != nil {
			return 2
		}
	}
}

// ReplyBound is the largest reply frame for reads of at most maxRead
// bytes: the base64 of the bytes, or a listing's budget, and room for the
// rest.
func ReplyBound(maxRead int64) int64 {
	b := max(maxRead, 0)/3*4 + 4
	return max(b, ListBudget) + 1<<20
}

// entrySize is what one entry adds to a listing's frame.
func entrySize(e Info) int {
	b, _ := json.Marshal(e)
	return len(b) + 1
}
