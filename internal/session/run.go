package session

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/report/jsonv1"
)

// waitDelay bounds the wait for a killed command's output to drain.
const waitDelay = 2 * time.Second

// Run runs req to completion, streaming its output through out as it
// comes (one call at a time; none after Run returns) and keeping the
// first OutputCap bytes of each stream in the result. A done ctx (the
// client went away) kills the command's whole process tree; Run then
// returns how it ended.
func (s *Session) Run(ctx context.Context, req RunRequest, out Output) (RunResult, error) {
	if err := s.touch(); err != nil {
		return RunResult{}, err
	}
	env, err := commandEnv(req.Env)
	if err != nil {
		return RunResult{}, err
	}
	if err := checkCommand(req.Argv, req.Cwd); err != nil {
		return RunResult{}, err
	}
	if req.Timeout < 0 {
		return RunResult{}, errorf(CodeBadRequest, "timeout_ms %d: want a positive number of milliseconds, or 0 for the policy's", req.Timeout.Milliseconds())
	}
	// The policy's own timeout is the sandbox's (Limits.Timeout) and
	// holds for every command; a shorter one asked for is timed here.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var timedOut atomic.Bool
	var timer *time.Timer
	if req.Timeout > 0 && (s.resolved.Config.Limits.Timeout <= 0 || req.Timeout < s.resolved.Config.Limits.Timeout) {
		timer = time.AfterFunc(req.Timeout, func() {
			timedOut.Store(true)
			stop()
		})
		defer timer.Stop()
	}

	cmd := s.sb.CommandContext(runCtx, req.Argv[0], req.Argv[1:]...)
	cmd.Args = slices.Clone(req.Argv)
	cmd.Env, cmd.Dir, cmd.WaitDelay = env, req.Cwd, waitDelay
	if len(req.Stdin) > 0 {
		cmd.Stdin = bytes.NewReader(req.Stdin)
	}
	var omu sync.Mutex
	stdout := &capture{mu: &omu, out: out, stream: "stdout", max: s.cap}
	stderr := &capture{mu: &omu, out: out, stream: "stderr", max: s.cap}
	cmd.Stdout, cmd.Stderr = stdout, stderr

	s.mu.Lock()
	s.running++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running--
		s.lastUsed = time.Now()
		s.mu.Unlock()
	}()
	before := s.sb.Refusals()
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return RunResult{}, startFailure(req.Argv[0], err)
	}
	s.m.logf("session %s: run %q", s.id, req.Argv)
	werr := cmd.Wait()
	took := time.Since(began)
	if timer != nil {
		timer.Stop()
	}
	res := RunResult{DurationMS: took.Milliseconds()}
	res.Stdout, res.StdoutTruncated = stdout.result()
	res.Stderr, res.StderrTruncated = stderr.result()
	res.Refusals = jsonv1.FromRefusals(newRefusals(before, s.sb.Refusals()))
	var ee *moat.ExitError
	switch {
	case werr == nil:
		res.ExitCode = cmd.ProcessState.ExitCode()
	case errors.As(werr, &ee):
		res.Limit = ee.Limit()
		res.Signal = exitSignal(ee.ProcessState)
		res.ExitCode = ee.ExitCode()
		if res.Signal != "" {
			res.ExitCode = -1
		}
	default:
		return res, internalError("run", werr)
	}
	if res.Limit == "timeout" {
		res.TimedOut = true
	}
	if timedOut.Load() && ctx.Err() == nil {
		res.TimedOut, res.Limit = true, "timeout"
	}
	return res, nil
}

// newRefusals is what after records that before did not: the entries
// added since, and the counting ones whose count grew.
func newRefusals(before, after []moat.Refusal) []moat.Refusal {
	var out []moat.Refusal
	for i, r := range after {
		if i >= len(before) || r != before[i] {
			out = append(out, r)
		}
	}
	return out
}

// checkCommand refuses an empty argv, NUL bytes, and a NUL in cwd.
func checkCommand(argv []string, cwd string) error {
	if len(argv) == 0 || argv[0] == "" {
		return errorf(CodeBadRequest, "argv is empty: give the command and its arguments, like [\"python3\", \"-c\", \"print(1)\"]")
	}
	for _, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return errorf(CodeBadRequest, "argv %q: an argument holds a NUL byte", a)
		}
	}
	if strings.IndexByte(cwd, 0) >= 0 {
		return errorf(CodeBadRequest, "cwd %q: holds a NUL byte", cwd)
	}
	return nil
}

// commandEnv turns a request's environment into NAME=VALUE entries, in
// order of name. A name of the server's own (MOAT_SERVE_*) is refused,
// whatever its value: the server's token never reaches a sandbox.
func commandEnv(m map[string]string) ([]string, error) {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	env := make([]string, 0, len(m))
	for _, k := range names {
		v := m[k]
		switch {
		case k == "" || strings.ContainsAny(k, "=\x00"):
			return nil, errorf(CodeBadRequest, "env %q: a name must be non-empty, without '=' or NUL", k)
		case strings.HasPrefix(strings.ToUpper(k), "MOAT_SERVE"):
			return nil, settingErrorf(CodeBadRequest, "env", "env %q: the server's own variables never reach a sandbox", k)
		case strings.IndexByte(v, 0) >= 0:
			return nil, errorf(CodeBadRequest, "env %q: the value holds a NUL byte", k)
		}
		env = append(env, k+"="+v)
	}
	return env, nil
}

// startFailure is a command that could not start, as an *Error: not
// found and not executable are CodeStart, the rest moat's own failure.
// The cause repeats the command's name (the caller's, or the sandbox's
// words about it), so it is quoted like the name: no newline or escape of
// it reaches the message raw.
func startFailure(name string, err error) *Error {
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return errorf(CodeStart, "command %q not found in the sandbox: %q", name, err.Error())
	case errors.Is(err, fs.ErrPermission):
		return errorf(CodeStart, "command %q cannot be executed in the sandbox: %q", name, err.Error())
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return errorf(CodeBadRequest, "command %q not started: the request ended first", name)
	}
	var ue *moat.UnsupportedError
	if errors.As(err, &ue) {
		return errorf(CodeInternal, "command %q not started: %q", name, err.Error())
	}
	return errorf(CodeStart, "command %q could not be started: %q", name, err.Error())
}
