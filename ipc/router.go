package ipc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"sync"
)

// validName reports whether s may name a command or an argument, which
// become file names of shims and --flags: a letter, then letters, digits,
// _ or -, at most 64 in all ([A-Za-z][A-Za-z0-9_-]{0,63}). Checked by
// hand: a regexp compiled at init would cost every program that imports
// the package, and so every shim's start.
func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '_' || c == '-')) {
			return false
		}
	}
	return true
}

// reservedFlags are the client's own flags, which no argument may be named.
var reservedFlags = []string{"help", "h", "stdin-arg"}

// Call is what a handler learns of the call besides its arguments. The
// zero value is a call with no input, from no directory, of no sandbox.
type Call struct {
	// Command is the name the command was called by.
	Command string
	// Dir is the caller's working directory as the sandbox says it sees
	// it, or "" when the client did not say. The sandbox chooses it: it is
	// untrusted input, like the arguments, kept for messages and for
	// compatibility. Never open a path built from it: use DirFile.
	Dir string
	// DirFile is Dir opened by the host, read-only, beneath the calling
	// process's root directory (the sandbox's view, through
	// /proc/PID/root) with openat2 and RESOLVE_BENEATH,
	// RESOLVE_NO_SYMLINKS and RESOLVE_NO_MAGICLINKS: a link or a ".."
	// on the way, a directory renamed since, or a caller that has exited
	// leaves it nil, and DirErr says why. A handler that acts on files of
	// the caller's directory does so relative to it (openat and the like),
	// and checks what it opens there as hostile: the descriptor carries
	// the host's rights, not the sandbox's. The server closes it when the
	// handler returns. Nil, with a nil DirErr, when Dir is empty.
	DirFile *os.File `json:"-"`
	// DirErr is why DirFile is nil although Dir is not empty. Neither
	// field is encoded as JSON.
	DirErr error `json:"-"`
	// Stdin is the caller's piped standard input, nil when it was a
	// terminal, /dev/null or absent.
	Stdin []byte
	// SandboxID is the id of the sandbox the call came from, set by the
	// host's [Server], never by the caller.
	SandboxID string
}

// Handler serves one command: it receives the decoded arguments and the
// call, and returns the response or an error. An *[Error] reaches the
// caller with its own code, any other error with [CodeFailed].
type Handler[A, R any] func(ctx context.Context, args A, call Call) (R, error)

// Option configures a command at [Register].
type Option func(*command) error

// Positional names the arguments that bare words on the command line fill,
// in order: with Positional("query"), web_search rust is web_search --query
// rust. A []string argument last among them takes every remaining word.
func Positional(names ...string) Option {
	return func(c *command) error {
		for _, n := range names {
			if _, ok := c.fields[n]; !ok {
				return fmt.Errorf("positional argument %q is not a field of %s", n, c.argType)
			}
			if slices.Contains(c.positional, n) {
				return fmt.Errorf("positional argument %q named twice", n)
			}
			c.positional = append(c.positional, n)
		}
		for i, n := range c.positional[:max(len(c.positional)-1, 0)] {
			if c.fields[n].kind == kindStrings {
				return fmt.Errorf("positional argument %q takes every remaining word, so it must be last (it is #%d)", n, i+1)
			}
		}
		return nil
	}
}

// StdinArg names the string or []byte argument that piped standard input
// fills when the caller does not set it, as if the caller had written
// --stdin-arg name.
func StdinArg(name string) Option {
	return func(c *command) error {
		f, ok := c.fields[name]
		if !ok {
			return fmt.Errorf("stdin argument %q is not a field of %s", name, c.argType)
		}
		if f.kind != kindString && f.kind != kindBytes {
			return fmt.Errorf("stdin argument %q must be a string or []byte field", name)
		}
		c.stdinArg = name
		return nil
	}
}

// Summary is the one line that -h prints under the command's usage.
func Summary(text string) Option {
	return func(c *command) error { c.summary = text; return nil }
}

// CommandInfo describes a registered command. The zero value describes
// no command.
type CommandInfo struct {
	Name       string   `json:"name"`
	Positional []string `json:"positional,omitempty"`
	StdinArg   string   `json:"stdin_arg,omitempty"`
	Summary    string   `json:"summary,omitempty"`
}

// Router holds the registered commands. It is safe for concurrent use;
// register every command before the router serves a sandbox, since a
// sandbox gets a shim for each command registered when it is created. The
// zero value is an empty router, ready to use.
type Router struct {
	mu   sync.RWMutex
	cmds map[string]*command
	errs []error
}

// NewRouter returns an empty router.
func NewRouter() *Router { return &Router{} }

// command is one registered command.
type command struct {
	name       string
	argType    reflect.Type
	fields     map[string]field
	order      []string // field names in declaration order, for usage
	positional []string
	stdinArg   string
	summary    string
	// serve decodes the JSON arguments, calls the handler and encodes
	// its response.
	serve func(ctx context.Context, args json.RawMessage, call Call) (json.RawMessage, error)
}

// Register adds the command name, served by h, to r. A is the argument
// type, a struct whose exported fields are the arguments under their JSON
// names (struct{} takes none); R is the response, encoded as JSON. An
// invalid name or argument name, a name registered twice, or an option
// that does not fit A is an error, which r also keeps: moat.New refuses a
// router with one.
func Register[A, R any](r *Router, name string, h Handler[A, R], opts ...Option) error {
	err := register(r, name, h, opts)
	if err != nil {
		err = fmt.Errorf("ipc: command %q: %w", name, err)
		r.mu.Lock()
		r.errs = append(r.errs, err)
		r.mu.Unlock()
	}
	return err
}

func register[A, R any](r *Router, name string, h Handler[A, R], opts []Option) error {
	if !validName(name) {
		return errors.New("a command name is a letter, then letters, digits, _ or -, at most 64 in all")
	}
	if h == nil {
		return errors.New("nil handler")
	}
	t := reflect.TypeFor[A]()
	if t.Kind() != reflect.Struct {
		return fmt.Errorf("the argument type %s is not a struct", t)
	}
	fields, order, err := argFields(t)
	if err != nil {
		return err
	}
	c := &command{name: name, argType: t, fields: fields, order: order}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(c); err != nil {
			return err
		}
	}
	c.serve = func(ctx context.Context, raw json.RawMessage, call Call) (json.RawMessage, error) {
		var args A
		if len(raw) > 0 && string(raw) != "null" {
			if err := decodeArgs(raw, &args); err != nil {
				return nil, err
			}
		}
		resp, err := h(ctx, args, call)
		if err != nil {
			return nil, err
		}
		out, err := json.Marshal(resp)
		if err != nil {
			return nil, Errorf(CodeInternal, "encoding the response: %v", err)
		}
		return out, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.cmds[name]; dup {
		return errors.New("registered twice")
	}
	if r.cmds == nil {
		r.cmds = map[string]*command{}
	}
	r.cmds[name] = c
	return nil
}

// Err returns the errors of every failed [Register] on r, joined, or nil.
func (r *Router) Err() error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return errors.Join(r.errs...)
}

// Commands lists the registered commands, sorted by name.
func (r *Router) Commands() []CommandInfo {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]CommandInfo, 0, len(r.cmds))
	for _, c := range r.cmds {
		out = append(out, c.info())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (c *command) info() CommandInfo {
	return CommandInfo{Name: c.name, Positional: slices.Clone(c.positional), StdinArg: c.stdinArg, Summary: c.summary}
}

func (r *Router) lookup(name string) *command {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.cmds[name]
}

// dispatch serves one request: usage, the list of commands, or a call,
// with a handler's panic turned into a CodePanic error.
func (r *Router) dispatch(ctx context.Context, req *request, sandboxID string, peer callerDirOpener) (result json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			result, err = nil, Errorf(CodePanic, "the command's handler panicked: %v", p)
		}
	}()
	if req.Help && req.Command == "" {
		return json.Marshal(r.Commands())
	}
	c := r.lookup(req.Command)
	if c == nil {
		return nil, Errorf(CodeUnknownCommand, "unknown command %q", req.Command)
	}
	if req.Help {
		return json.Marshal(c.usage())
	}
	call := Call{Command: c.name, Dir: req.Dir, SandboxID: sandboxID}
	if req.Dir != "" {
		if peer == nil {
			call.DirErr = errNoCallerDir
		} else if call.DirFile, call.DirErr = peer.openDir(req.Dir); call.DirFile != nil {
			defer call.DirFile.Close()
		}
	}
	if req.Piped {
		call.Stdin = req.Stdin
		if call.Stdin == nil {
			call.Stdin = []byte{}
		}
	}
	args := req.Args
	if req.Argv != nil {
		args, err = c.parseArgv(req.Argv, call.Stdin)
		if err != nil {
			return nil, err
		}
	}
	return c.serve(ctx, args, call)
}

// asError converts a handler's error into the *Error sent back.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeFailed, Message: err.Error()}
}
