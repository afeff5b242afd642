package serve

import (
	"github.com/moat-sandbox/moat/internal/report/jsonv1"
	"github.com/moat-sandbox/moat/internal/session"
)

// The request and response bodies whose bytes travel as Bytes; the other
// bodies are the session core's types as they are.

// runBody is POST /v1/sessions/{id}/run.
type runBody struct {
	Argv      []string          `json:"argv"`
	Env       map[string]string `json:"env,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	Stdin     *Bytes            `json:"stdin,omitempty"`
	TimeoutMS int64             `json:"timeout_ms,omitempty"`
	Stream    bool              `json:"stream,omitempty"`
}

// runResult is session.RunResult on the wire.
type runResult struct {
	ExitCode        int              `json:"exit_code"`
	Signal          string           `json:"signal,omitempty"`
	TimedOut        bool             `json:"timed_out"`
	Limit           string           `json:"limit,omitempty"`
	Stdout          Bytes            `json:"stdout"`
	Stderr          Bytes            `json:"stderr"`
	StdoutTruncated bool             `json:"stdout_truncated"`
	StderrTruncated bool             `json:"stderr_truncated"`
	Refusals        []jsonv1.Refusal `json:"refusals"`
	DurationMS      int64            `json:"duration_ms"`
}

func wireResult(r session.RunResult) runResult {
	refusals := r.Refusals
	if refusals == nil {
		refusals = []jsonv1.Refusal{}
	}
	return runResult{
		ExitCode: r.ExitCode, Signal: r.Signal, TimedOut: r.TimedOut, Limit: r.Limit,
		Stdout: r.Stdout, Stderr: r.Stderr,
		StdoutTruncated: r.StdoutTruncated, StderrTruncated: r.StderrTruncated,
		Refusals: refusals, DurationMS: r.DurationMS,
	}
}

// chunk is session.Chunk on the wire.
type chunk struct {
	Data    Bytes `json:"data"`
	Offset  int64 `json:"offset"`
	Next    int64 `json:"next"`
	Dropped int64 `json:"dropped"`
}

type procOutput struct {
	Proc   session.Proc `json:"process"`
	Stdout chunk        `json:"stdout"`
	Stderr chunk        `json:"stderr"`
}

func wireChunk(c session.Chunk) chunk {
	return chunk{Data: c.Data, Offset: c.Offset, Next: c.Next, Dropped: c.Dropped}
}

// fileRead answers GET /v1/sessions/{id}/files.
type fileRead struct {
	Info      session.FileInfo `json:"info"`
	Content   Bytes            `json:"content"`
	Truncated bool             `json:"truncated"`
}

// fileWrite is PUT /v1/sessions/{id}/files.
type fileWrite struct {
	Path    string `json:"path"`
	Content *Bytes `json:"content"`
	Mode    string `json:"mode,omitempty"`
}

// signalBody is POST .../processes/{pid}/signal.
type signalBody struct {
	Signal string `json:"signal"`
}

type sessionList struct {
	Sessions []session.Info `json:"sessions"`
}

type policyList struct {
	Policies []session.PolicyInfo `json:"policies"`
}

type procList struct {
	Processes []session.Proc `json:"processes"`
}

type fileList struct {
	Entries   []session.FileInfo `json:"entries"`
	Truncated bool               `json:"truncated"`
}

type refusalList struct {
	Refusals []jsonv1.Refusal `json:"refusals"`
}

type closed struct {
	Report jsonv1.Document `json:"report"`
}

// streamEvent is one line of a streamed run.
type streamEvent struct {
	Type   string     `json:"type"` // stdout, stderr, exit, error
	Data   *Bytes     `json:"data,omitempty"`
	Result *runResult `json:"result,omitempty"`
	Error  *errorJSON `json:"error,omitempty"`
}
