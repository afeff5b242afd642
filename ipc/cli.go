package ipc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Exit statuses of the command-line client.
const (
	// ExitFailed is a call that failed: the handler's error, a panic, an
	// unknown command, a host that cannot be reached.
	ExitFailed = 1
	// ExitUsage is a mistake in the arguments (CodeUsage).
	ExitUsage = 2
)

// maxStdin is the most piped input a call carries: base64 in a frame of
// MaxFrameSize, with room for the rest of the request.
const maxStdin = (MaxFrameSize - 64<<10) / 4 * 3

// Invocation is one run of a command by the command-line client, as a
// shim or moat ipc NAME makes it. The zero value has no endpoint and no
// streams.
type Invocation struct {
	// Endpoint is the server's socket path; empty means $MOAT_IPC_ENDPOINT.
	Endpoint string
	// Name is the command's name.
	Name string
	// Args are the words after the name.
	Args []string
	// Stdin is read to its end and sent, unless it is nil, a terminal or
	// another character device (such as /dev/null), which send nothing.
	Stdin io.Reader
	// Stdout receives the response; Stderr the error, as "name: message".
	Stdout, Stderr io.Writer
	// Dir is the caller's working directory; empty means the current one.
	Dir string
}

// Main runs command name as the sandbox's command-line client, with args,
// the process's standard streams and $MOAT_IPC_ENDPOINT, and returns its
// exit status: 0, [ExitFailed] or [ExitUsage].
func Main(name string, args []string) int {
	return Invocation{Name: name, Args: args, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}.Run(context.Background())
}

// Run makes the call and prints its outcome: a string response as it is,
// any other response as indented JSON and a newline, an error as
// "name: message" on Stderr. -h or --help before any -- prints the usage
// without reading Stdin. It returns the exit status.
func (inv Invocation) Run(ctx context.Context) int {
	if inv.Stdout == nil {
		inv.Stdout = io.Discard
	}
	if inv.Stderr == nil {
		inv.Stderr = io.Discard
	}
	fail := func(err error) int {
		msg, code := err.Error(), ExitFailed
		var e *Error
		if errors.As(err, &e) {
			msg = e.Message
			if e.Code == CodeUsage {
				code = ExitUsage
			}
		}
		fmt.Fprintf(inv.Stderr, "%s: %s\n", inv.Name, msg)
		return code
	}
	endpoint := inv.Endpoint
	if endpoint == "" {
		endpoint = os.Getenv(EndpointEnv)
	}
	if endpoint == "" {
		return fail(Errorf(CodeUnavailable, "%s is not set: this command runs only inside a moat sandbox with IPC", EndpointEnv))
	}
	c, err := Dial(ctx, endpoint)
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	if wantsHelp(inv.Args) {
		u, err := c.Usage(ctx, inv.Name)
		if err != nil {
			return fail(err)
		}
		io.WriteString(inv.Stdout, u)
		return 0
	}
	in := Input{Args: inv.Args, Dir: inv.Dir}
	if in.Dir == "" {
		in.Dir, _ = os.Getwd()
	}
	if in.Stdin, err = readStdin(inv.Stdin); err != nil {
		return fail(err)
	}
	out, err := c.Run(ctx, inv.Name, in)
	if err != nil {
		return fail(err)
	}
	if err := printResult(inv.Stdout, out); err != nil {
		return fail(err)
	}
	return 0
}

// wantsHelp reports a -h or --help before any --.
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "--help":
			return true
		}
	}
	return false
}

// readStdin reads piped input: nil for none, a terminal or a character
// device.
func readStdin(r io.Reader) ([]byte, error) {
	if r == nil {
		return nil, nil
	}
	if f, ok := r.(*os.File); ok {
		fi, err := f.Stat()
		if err != nil || fi.Mode()&os.ModeCharDevice != 0 {
			return nil, nil
		}
	}
	b, err := io.ReadAll(io.LimitReader(r, maxStdin+1))
	if err != nil {
		return nil, Errorf(CodeFailed, "reading standard input: %v", err)
	}
	if len(b) > maxStdin {
		return nil, Errorf(CodeTooLarge, "standard input is over the %d-byte limit of a call", maxStdin)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// printResult prints a string as it is, anything else as indented JSON.
func printResult(w io.Writer, out json.RawMessage) error {
	var s string
	if len(out) > 0 && out[0] == '"' && json.Unmarshal(out, &s) == nil {
		_, err := io.WriteString(w, s)
		return err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, out, "", "  "); err != nil {
		return Errorf(CodeBadRequest, "the response is not JSON: %v", err)
	}
	buf.WriteByte('\n')
	_, err := w.Write(buf.Bytes())
	return err
}
