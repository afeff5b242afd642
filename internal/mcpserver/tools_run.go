package mcpserver

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/moat-sandbox/moat/internal/session"
)

// RunInput is run_command's arguments.
type RunInput struct {
	Argv           []string          `json:"argv" jsonschema:"the command and its arguments, e.g. [\"python3\", \"-m\", \"pytest\"]; no shell unless you run one (e.g. [\"sh\", \"-c\", \"...\"])"`
	Cwd            string            `json:"cwd,omitempty" jsonschema:"working directory inside the sandbox, relative to its working directory; empty means the working directory"`
	Env            map[string]string `json:"env,omitempty" jsonschema:"environment variables to add"`
	Stdin          string            `json:"stdin,omitempty" jsonschema:"text given to the command's standard input, then end of file"`
	TimeoutMS      int64             `json:"timeout_ms,omitempty" jsonschema:"kill the command after this many milliseconds; 0 means the policy's timeout"`
	MaxOutputBytes int               `json:"max_output_bytes,omitempty" jsonschema:"at most this many bytes of each of stdout and stderr are returned; 0 means 65536; at most 1048576"`
}

// RunOutput is how a command ended. The zero value is a command that
// exited 0 and printed nothing.
type RunOutput struct {
	ExitCode        int       `json:"exit_code"`
	Signal          string    `json:"signal,omitempty"`
	TimedOut        bool      `json:"timed_out"`
	Limit           string    `json:"limit,omitempty"`
	Stdout          Bytes     `json:"stdout"`
	Stderr          Bytes     `json:"stderr"`
	StdoutTruncated bool      `json:"stdout_truncated"`
	StderrTruncated bool      `json:"stderr_truncated"`
	Refusals        []Refusal `json:"refusals"`
	DurationMS      int64     `json:"duration_ms"`
}

const (
	defaultOutput = 64 << 10
	maxOutput     = 1 << 20
)

// outputCap is the bound asked for, within moat's.
func outputCap(n int) int {
	if n <= 0 {
		return defaultOutput
	}
	return min(n, maxOutput)
}

// clip keeps at most n bytes of b, backing off to the start of a UTF-8
// character it would split, and says whether it cut.
func clip(b []byte, n int) ([]byte, bool) {
	if len(b) <= n {
		return b, false
	}
	c := n
	for i := 0; i < utf8.UTFMax-1 && c > 0 && !utf8.RuneStart(b[c]); i++ {
		c--
	}
	return b[:c], true
}

func (s *Server) addRunTools() {
	mcp.AddTool(s.mcp, s.tool("run_command",
		"Run a command to completion in the sandbox and return its exit code, its output (bounded; truncation is said) and what the sandbox refused it. "+
			"Files written by earlier calls stay; use start_process for servers and watchers.", false), s.runCommand)
	mcp.AddTool(s.mcp, s.tool("session_info",
		"Describe this connection's sandbox: its id, working directory, expiry, and what its policy allows. Makes the sandbox if there is none yet.", true), s.sessionInfo)
}

func (s *Server) runCommand(ctx context.Context, req *mcp.CallToolRequest, in RunInput) (*mcp.CallToolResult, any, error) {
	if len(in.Argv) == 0 {
		return badInput("argv is empty: give the command and its arguments")
	}
	if in.TimeoutMS < 0 {
		return badInput("timeout_ms must not be negative")
	}
	sess, err := s.sessionFor(ctx, req)
	if err != nil {
		return failure(err)
	}
	rr := session.RunRequest{Argv: in.Argv, Env: in.Env, Cwd: in.Cwd, Stdin: []byte(in.Stdin), Timeout: time.Duration(in.TimeoutMS) * time.Millisecond}
	n := outputCap(in.MaxOutputBytes)
	st := newStreamer(ctx, req, n+utf8.UTFMax) // clip sees past the bound
	res, err := sess.Run(ctx, rr, st.output)
	if err != nil {
		return failure(err)
	}
	stdout, stderr, cutOut, cutErr := st.result()
	out, ot := clip(stdout, n)
	errb, et := clip(stderr, n)
	o := RunOutput{
		ExitCode: res.ExitCode, Signal: res.Signal, TimedOut: res.TimedOut, Limit: res.Limit,
		Stdout: bytesOf(out), Stderr: bytesOf(errb),
		StdoutTruncated: ot || cutOut, StderrTruncated: et || cutErr,
		Refusals: refusalsOf(res.Refusals), DurationMS: res.DurationMS,
	}
	return result(endWords(o)+truncWords(o.StdoutTruncated, o.StderrTruncated)+refusalLines(o.Refusals), o)
}

// endWords says how a command ended, from moat's own fields.
func endWords(o RunOutput) string {
	switch {
	case o.TimedOut:
		return "the command timed out and was killed"
	case o.Limit != "":
		return fmt.Sprintf("the command was killed by a limit: %q", o.Limit)
	case o.Signal != "":
		return fmt.Sprintf("the command was killed by signal %q", o.Signal)
	default:
		return fmt.Sprintf("the command exited with code %d", o.ExitCode)
	}
}

// truncWords says which output was cut.
func truncWords(out, errb bool) string {
	switch {
	case out && errb:
		return " (stdout and stderr were truncated)"
	case out:
		return " (stdout was truncated)"
	case errb:
		return " (stderr was truncated)"
	}
	return ""
}

// sessionFor is the session of req's connection, made on first use.
func (s *Server) sessionFor(ctx context.Context, req *mcp.CallToolRequest) (*session.Session, error) {
	c, err := s.connOf(req)
	if err != nil {
		return nil, err
	}
	return c.session(ctx)
}

// SessionInfoOutput describes a connection's session. The zero value is
// not used.
type SessionInfoOutput struct {
	Session session.Info `json:"session"`
	Source  string       `json:"policy_source"`
	Never   []string     `json:"never_offered"`
}

func (s *Server) sessionInfo(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	sess, err := s.sessionFor(ctx, req)
	if err != nil {
		return failure(err)
	}
	o := SessionInfoOutput{Session: sess.Info(), Source: s.source,
		Never: []string{"applying a workspace", "restoring from the quarantine", "any change to the policy"}}
	return result(fmt.Sprintf("sandbox %q, policy %q, working directory %q", o.Session.ID, o.Session.Policy, o.Session.WorkDir), o)
}
