package mcpserver

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/moat-sandbox/moat/internal/session"
)

// PathInput names a path in the sandbox.
type PathInput struct {
	Path string `json:"path" jsonschema:"a path as the sandbox sees it: absolute, or relative to the working directory"`
}

// ReadInput is read_file's arguments.
type ReadInput struct {
	Path     string `json:"path" jsonschema:"a path as the sandbox sees it: absolute, or relative to the working directory"`
	MaxBytes int64  `json:"max_bytes,omitempty" jsonschema:"read at most this many bytes; 0 means 262144; at most 4194304"`
}

// WriteInput is write_file's arguments.
type WriteInput struct {
	Path    string `json:"path" jsonschema:"where to write, in the working directory or a writable place; replaced whole"`
	Content string `json:"content,omitempty" jsonschema:"the file's text"`
	Base64  string `json:"base64,omitempty" jsonschema:"the file's bytes in base64, instead of content"`
	Mode    string `json:"mode,omitempty" jsonschema:"octal permissions, like 0644 (the default) or 0755"`
}

// FileOut is a file's content and description. The zero value is not used.
type FileOut struct {
	Info      session.FileInfo `json:"info"`
	Content   Bytes            `json:"content"`
	Truncated bool             `json:"truncated"`
}

// FileList lists a directory. The zero value is not used.
type FileList struct {
	Entries []session.FileInfo `json:"entries"`
}

const (
	defaultRead = 256 << 10
	maxRead     = 4 << 20
)

func (s *Server) addFileTools() {
	mcp.AddTool(s.mcp, s.tool("read_file", "Read a file in the sandbox's view (bounded; truncation is said). A FIFO, device or directory is refused.", true), s.readFile)
	mcp.AddTool(s.mcp, s.tool("write_file", "Write a file in the sandbox's working directory or a writable place, replacing it whole; parent directories must exist (make them with run_command mkdir -p).", false), s.writeFile)
	mcp.AddTool(s.mcp, s.tool("list_files", "List a directory in the sandbox's view; links are listed, never followed.", true), s.listFiles)
	mcp.AddTool(s.mcp, s.tool("stat_file", "Describe a path in the sandbox's view: type, size, mode, time; a final link is described, not followed.", true), s.statFile)
}

func (s *Server) readFile(ctx context.Context, req *mcp.CallToolRequest, in ReadInput) (*mcp.CallToolResult, any, error) {
	if in.Path == "" {
		return badInput("path is empty")
	}
	n := in.MaxBytes
	if n <= 0 {
		n = defaultRead
	}
	n = min(n, maxRead)
	sess, err := s.sessionFor(ctx, req)
	if err != nil {
		return failure(err)
	}
	// One byte more than asked tells whether there was more.
	data, info, err := sess.ReadFile(in.Path, n+1)
	if err != nil {
		return failure(err)
	}
	o := FileOut{Info: info}
	if int64(len(data)) > n {
		data, o.Truncated = data[:n], true
	}
	o.Content = bytesOf(data)
	sum := fmt.Sprintf("read %d bytes of %q", len(data), info.Path)
	if o.Truncated {
		sum += fmt.Sprintf(" (truncated: the file has %d bytes; raise max_bytes or read it in parts with run_command)", info.Size)
	}
	return result(sum, o)
}

func (s *Server) writeFile(ctx context.Context, req *mcp.CallToolRequest, in WriteInput) (*mcp.CallToolResult, any, error) {
	if in.Path == "" {
		return badInput("path is empty")
	}
	data := []byte(in.Content)
	if in.Base64 != "" {
		if in.Content != "" {
			return badInput("give content or base64, not both")
		}
		b, err := base64.StdEncoding.DecodeString(in.Base64)
		if err != nil {
			return badInput("base64: %v", err)
		}
		data = b
	}
	mode := os.FileMode(0o644)
	if in.Mode != "" {
		m, err := strconv.ParseUint(in.Mode, 8, 32)
		if err != nil || m > 0o777 {
			return badInput("mode %q: give octal permission bits, like 0644", in.Mode)
		}
		mode = os.FileMode(m)
	}
	sess, err := s.sessionFor(ctx, req)
	if err != nil {
		return failure(err)
	}
	info, err := sess.WriteFile(in.Path, data, mode)
	if err != nil {
		return failure(err)
	}
	return result(fmt.Sprintf("wrote %d bytes to %q", len(data), info.Path), info)
}

func (s *Server) listFiles(ctx context.Context, req *mcp.CallToolRequest, in PathInput) (*mcp.CallToolResult, any, error) {
	p := in.Path
	if p == "" {
		p = "."
	}
	sess, err := s.sessionFor(ctx, req)
	if err != nil {
		return failure(err)
	}
	es, err := sess.List(p)
	if err != nil {
		return failure(err)
	}
	if es == nil {
		es = []session.FileInfo{}
	}
	return result(fmt.Sprintf("%d entries in %q", len(es), p), FileList{es})
}

func (s *Server) statFile(ctx context.Context, req *mcp.CallToolRequest, in PathInput) (*mcp.CallToolResult, any, error) {
	if in.Path == "" {
		return badInput("path is empty")
	}
	sess, err := s.sessionFor(ctx, req)
	if err != nil {
		return failure(err)
	}
	info, err := sess.Stat(in.Path)
	if err != nil {
		return failure(err)
	}
	return result(fmt.Sprintf("%q is a %s of %d bytes", info.Path, safeWord(info.Type), info.Size), info)
}
