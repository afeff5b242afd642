// Package serve is the HTTP/JSON face of internal/session: "moat serve".
// It decodes requests strictly (unknown fields and trailing values are
// refused, bodies are bounded), answers errors as JSON bodies with the
// stable codes of docs/serve.md, streams a command's output as NDJSON or
// server-sent events, and decides who may connect: on the Unix socket a
// peer of the server's uid and user namespace (no sandboxed process with
// namespaces), with the bearer token required while a session without the
// socket guard lives; on loopback TCP, the token always.
package serve
