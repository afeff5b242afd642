// Package mcpserver is moat mcp: an MCP server, built on the official Go
// SDK, that drives one session (internal/session) per MCP connection.
//
// The server serves exactly one policy, fixed when it starts. A connection's
// session is made on its first tool call (or by start_session) and closed
// when the connection ends. No tool changes the policy, applies a
// workspace or restores from the quarantine (Forbidden lists them).
//
// Text that reaches the model is data: anything a sandbox could have made
// (paths, host names, output) travels in structured content as JSON
// strings, and the text content quotes it. Advice on what the user may
// change is written from a refusal's setting, never copied from it.
package mcpserver
