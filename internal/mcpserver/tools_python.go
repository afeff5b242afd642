package mcpserver

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// PythonInput is run_python's arguments.
type PythonInput struct {
	Code      string `json:"code" jsonschema:"Python code; variables, imports and functions persist between calls; the value of a final expression is returned"`
	TimeoutMS int64  `json:"timeout_ms,omitempty" jsonschema:"kill the interpreter after this many milliseconds (its variables are lost); 0 means 60000; at most 600000"`
}

// PythonOutput is one run_python call's outcome. The zero value is code
// that ran, printed nothing and left no value.
type PythonOutput struct {
	Status          string  `json:"status"` // "ok", "error", "timeout", "restarted"
	Value           *string `json:"value"`
	Error           string  `json:"error,omitempty"`
	Stdout          string  `json:"stdout"`
	Stderr          string  `json:"stderr"`
	StdoutTruncated bool    `json:"stdout_truncated"`
	StderrTruncated bool    `json:"stderr_truncated"`
	Restarted       bool    `json:"interpreter_restarted"`
	Note            string  `json:"note,omitempty"`
}

const (
	defaultPyTimeout = 60 * time.Second
	maxPyTimeout     = 10 * time.Minute
	maxPyField       = 128 << 10
)

func (s *Server) addPythonTool() {
	mcp.AddTool(s.mcp, s.tool("run_python",
		"Run Python code in a persistent interpreter inside the sandbox (the venv of moat python's policy when it has one, else python3): variables, imports and functions survive between calls. "+
			"Returns what the code printed (its subprocesses' output too), the repr of a final expression, or the traceback. "+
			"A call past its timeout kills the interpreter, which then restarts empty; the result says so.", false), s.runPython)
}

func (s *Server) runPython(ctx context.Context, req *mcp.CallToolRequest, in PythonInput) (*mcp.CallToolResult, any, error) {
	if in.TimeoutMS < 0 {
		return badInput("timeout_ms must not be negative")
	}
	timeout := defaultPyTimeout
	if in.TimeoutMS > 0 {
		timeout = min(time.Duration(in.TimeoutMS)*time.Millisecond, maxPyTimeout)
	}
	c, err := s.connOf(req)
	if err != nil {
		return failure(err)
	}
	py, err := c.interp(ctx)
	if err != nil {
		return failure(err)
	}
	call, err := py.call(ctx, in.Code, timeout)
	if err != nil {
		return failure(err)
	}
	if call.lost != "" {
		o := PythonOutput{Status: "restarted", Restarted: true, Note: call.lost}
		if call.timedOut {
			o.Status = "timeout"
		}
		res, _, err := result("error: "+call.lost, o)
		if res != nil {
			res.IsError = true
		}
		return res, nil, err
	}
	r := call.res
	o := PythonOutput{Status: r.Status, Error: clipText(r.Error), Stdout: clipText(r.Stdout), Stderr: clipText(r.Stderr),
		StdoutTruncated: r.StdoutTruncated || len(r.Stdout) > maxPyField, StderrTruncated: r.StderrTruncated || len(r.Stderr) > maxPyField}
	if r.Value != nil {
		v := clipText(*r.Value)
		o.Value = &v
	}
	sum := "the code ran"
	if r.Status == "error" {
		sum = "the code raised an exception (traceback in the error field)"
	}
	res, _, err := result(sum+truncWords(o.StdoutTruncated, o.StderrTruncated), o)
	if res != nil && r.Status == "error" {
		res.IsError = true
	}
	return res, nil, err
}

// clipText bounds text from the interpreter.
func clipText(s string) string {
	b, _ := clip([]byte(s), maxPyField)
	return string(b)
}
