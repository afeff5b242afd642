package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/moat-sandbox/moat/internal/session"
)

// StartInput is start_process's arguments.
type StartInput struct {
	Argv []string          `json:"argv" jsonschema:"the command and its arguments"`
	Cwd  string            `json:"cwd,omitempty" jsonschema:"working directory inside the sandbox; empty means the working directory"`
	Env  map[string]string `json:"env,omitempty" jsonschema:"environment variables to add"`
}

// ProcInput names a background process.
type ProcInput struct {
	ID string `json:"id" jsonschema:"the process id start_process returned, like p1"`
}

// SignalInput is signal_process's arguments.
type SignalInput struct {
	ID     string `json:"id" jsonschema:"the process id, like p1"`
	Signal string `json:"signal" jsonschema:"one of TERM, INT, KILL, HUP, USR1, USR2"`
}

// OutputInput is read_process_output's arguments.
type OutputInput struct {
	ID         string `json:"id" jsonschema:"the process id, like p1"`
	StdoutFrom int64  `json:"stdout_from,omitempty" jsonschema:"byte offset to read stdout from: the stdout.next of the previous read; 0 for the start"`
	StderrFrom int64  `json:"stderr_from,omitempty" jsonschema:"byte offset to read stderr from: the stderr.next of the previous read"`
	MaxBytes   int    `json:"max_bytes,omitempty" jsonschema:"at most this many bytes of each stream; 0 means 65536"`
}

// ChunkOut is part of a stream; Next is the offset to ask for next. The
// zero value is an empty chunk at the start.
type ChunkOut struct {
	Data      Bytes `json:"data"`
	Offset    int64 `json:"offset"`
	Next      int64 `json:"next"`
	Dropped   int64 `json:"dropped"`
	Truncated bool  `json:"truncated"`
}

// chunkOf bounds c to n bytes; Next then points after what is returned.
func chunkOf(c session.Chunk, n int) ChunkOut {
	d, cut := clip(c.Data, n)
	next := c.Next
	if cut {
		next = c.Offset + int64(len(d))
	}
	return ChunkOut{Data: bytesOf(d), Offset: c.Offset, Next: next, Dropped: c.Dropped, Truncated: cut}
}

func (s *Server) addProcTools() {
	mcp.AddTool(s.mcp, s.tool("start_process",
		"Start a background process in the sandbox (a dev server, a watcher) and return its id at once. Read its output with read_process_output; stop it with stop_process.", false), s.startProcess)
	mcp.AddTool(s.mcp, s.tool("read_process_output",
		"Read a background process's output from byte offsets on, and its state. Pass the returned next offsets to read only what is new.", true), s.readOutput)
	mcp.AddTool(s.mcp, s.tool("list_processes", "List this sandbox's background processes and their states.", true), s.listProcs)
	mcp.AddTool(s.mcp, s.tool("stop_process", "Stop a background process and its children: TERM, then KILL after 2 seconds.", false), s.stopProc)
	mcp.AddTool(s.mcp, s.tool("signal_process", "Send a signal (TERM, INT, KILL, HUP, USR1, USR2) to a background process.", false), s.signalProc)
}

func (s *Server) startProcess(ctx context.Context, req *mcp.CallToolRequest, in StartInput) (*mcp.CallToolResult, any, error) {
	if len(in.Argv) == 0 {
		return badInput("argv is empty: give the command and its arguments")
	}
	sess, err := s.sessionFor(ctx, req)
	if err != nil {
		return failure(err)
	}
	p, err := sess.Start(session.StartRequest{Argv: in.Argv, Env: in.Env, Cwd: in.Cwd})
	if err != nil {
		return failure(err)
	}
	return result(fmt.Sprintf("started process %q (pid %d)", p.ID, p.PID), p)
}

// OutputOut is a process's state and output. The zero value is not used.
type OutputOut struct {
	Process session.Proc `json:"process"`
	Stdout  ChunkOut     `json:"stdout"`
	Stderr  ChunkOut     `json:"stderr"`
}

func (s *Server) readOutput(ctx context.Context, req *mcp.CallToolRequest, in OutputInput) (*mcp.CallToolResult, any, error) {
	if in.StdoutFrom < 0 || in.StderrFrom < 0 {
		return badInput("offsets must not be negative")
	}
	sess, err := s.sessionFor(ctx, req)
	if err != nil {
		return failure(err)
	}
	po, err := sess.Output(in.ID, in.StdoutFrom, in.StderrFrom)
	if err != nil {
		return failure(err)
	}
	n := outputCap(in.MaxBytes)
	o := OutputOut{Process: po.Proc, Stdout: chunkOf(po.Stdout, n), Stderr: chunkOf(po.Stderr, n)}
	return result(fmt.Sprintf("process %q is %s", o.Process.ID, safeWord(o.Process.State)), o)
}

// ProcList lists processes; never null. The zero value is not used.
type ProcList struct {
	Processes []session.Proc `json:"processes"`
}

func (s *Server) listProcs(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	sess, err := s.sessionFor(ctx, req)
	if err != nil {
		return failure(err)
	}
	ps := sess.Procs()
	if ps == nil {
		ps = []session.Proc{}
	}
	return result(fmt.Sprintf("%d background processes", len(ps)), ProcList{ps})
}

func (s *Server) stopProc(ctx context.Context, req *mcp.CallToolRequest, in ProcInput) (*mcp.CallToolResult, any, error) {
	sess, err := s.sessionFor(ctx, req)
	if err != nil {
		return failure(err)
	}
	p, err := sess.Stop(in.ID)
	if err != nil {
		return failure(err)
	}
	return result(fmt.Sprintf("process %q stopped", p.ID), p)
}

func (s *Server) signalProc(ctx context.Context, req *mcp.CallToolRequest, in SignalInput) (*mcp.CallToolResult, any, error) {
	switch in.Signal {
	case "TERM", "INT", "KILL", "HUP", "USR1", "USR2":
	default:
		return badInput("signal %q: use one of TERM, INT, KILL, HUP, USR1, USR2", in.Signal)
	}
	sess, err := s.sessionFor(ctx, req)
	if err != nil {
		return failure(err)
	}
	if err := sess.Signal(in.ID, in.Signal); err != nil {
		return failure(err)
	}
	return result(fmt.Sprintf("sent %s to process %q", in.Signal, in.ID), struct {
		ID     string `json:"id"`
		Signal string `json:"signal"`
	}{in.ID, in.Signal})
}
