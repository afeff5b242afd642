// Package session keeps long-lived sandboxes for an agent: a [Manager]
// makes each [Session] from one of the pinned policies the person who
// started the server named, narrowed as the client asks and never widened.
// In a session a caller runs commands with their output streamed, keeps
// background processes, and reads, writes, lists and stats files in the
// working directory and the writable grants.
//
// The package is the shared core of "moat serve" (internal/serve) and
// "moat mcp" (internal/mcpserver); it reads no file a sandbox could write
// and trusts nothing a sandbox wrote: paths, file contents and output are
// data, bounded in size.
package session
