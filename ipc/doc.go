// Package ipc is moat's typed escape hatch from a sandbox to its host:
// commands registered on a [Router] in the host process appear inside the
// sandbox as ordinary executables on PATH, and each run of one reaches a Go
// handler in the host with typed arguments.
//
// A handler is an ordinary Go function over an argument struct and a
// response type:
//
//	type SearchArgs struct {
//		Query string `json:"query"`
//		Limit int    `json:"limit"`
//	}
//
//	r := ipc.NewRouter()
//	err := ipc.Register(r, "web_search", func(ctx context.Context, a SearchArgs, c ipc.Call) ([]string, error) {
//		return search(ctx, a.Query, a.Limit)
//	}, ipc.Positional("query"))
//
// Inside the sandbox, web_search rust --limit 3 calls it with
// SearchArgs{Query: "rust", Limit: 3}. Arguments are --name value,
// --name=value, --flag for a bool field, and bare words for the declared
// positional names; --stdin-arg NAME (or [StdinArg]) puts piped input in a
// field, and -h prints the command's usage without reading input. A string
// response is printed as it is, any other as JSON; an error prints
// "name: message" on standard error and exits non-zero (2 for a usage
// error, 1 otherwise).
//
// The transport is a Unix socket ([Server], [Client]) carrying frames of a
// 4-byte big-endian length and a JSON body of at most [MaxFrameSize] bytes.
// A malformed, truncated or oversized frame gets an error response and the
// server keeps serving; a handler's panic becomes an error response. The
// package depends on nothing else of moat: package moat wires a Router
// into a sandbox through its Config.IPC field.
package ipc
