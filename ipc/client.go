package ipc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// Client is a connection to a [Server]. Its methods are safe for
// concurrent use; calls on one Client run one at a time. The zero value
// is not connected: use [Dial].
type Client struct {
	mu   sync.Mutex
	conn net.Conn
	br   *bufio.Reader
	next uint64
}

// Dial connects to the server listening on the Unix socket endpoint.
func Dial(ctx context.Context, endpoint string) (*Client, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", endpoint)
	if err != nil {
		return nil, Errorf(CodeUnavailable, "cannot reach the host at %s: %v", endpoint, err)
	}
	return &Client{conn: conn, br: bufio.NewReader(conn)}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Call calls command name with args (encoded as the JSON object of its
// arguments; nil for none) and decodes the response into result (a
// pointer, or nil to discard it). An error from the host is an *[Error].
func (c *Client) Call(ctx context.Context, name string, args, result any) error {
	raw, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("ipc: encoding the arguments of %s: %w", name, err)
	}
	out, err := c.do(ctx, &request{Command: name, Args: raw})
	if err != nil || result == nil {
		return err
	}
	if err := json.Unmarshal(out, result); err != nil {
		return fmt.Errorf("ipc: decoding the response of %s: %w", name, err)
	}
	return nil
}

// Input is a command line's call as the command-line client makes it.
// The zero value calls with no arguments, no input and no directory.
type Input struct {
	// Args are the words after the command's name.
	Args []string
	// Stdin is the piped input; nil means none was piped.
	Stdin []byte
	// Dir is the caller's working directory.
	Dir string
}

// Run calls command name with a command line, which the server parses
// against the command's argument type, and returns the response's JSON.
func (c *Client) Run(ctx context.Context, name string, in Input) (json.RawMessage, error) {
	argv := in.Args
	if argv == nil {
		argv = []string{}
	}
	return c.do(ctx, &request{Command: name, Argv: argv, Stdin: in.Stdin, Piped: in.Stdin != nil, Dir: in.Dir})
}

// Usage returns the usage text of command name.
func (c *Client) Usage(ctx context.Context, name string) (string, error) {
	out, err := c.do(ctx, &request{Command: name, Help: true})
	if err != nil {
		return "", err
	}
	var s string
	if err := json.Unmarshal(out, &s); err != nil {
		return "", fmt.Errorf("ipc: decoding the usage of %s: %w", name, err)
	}
	return s, nil
}

// Commands lists the server's commands.
func (c *Client) Commands(ctx context.Context) ([]CommandInfo, error) {
	out, err := c.do(ctx, &request{Help: true})
	if err != nil {
		return nil, err
	}
	var list []CommandInfo
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("ipc: decoding the list of commands: %w", err)
	}
	return list, nil
}

// do sends req and waits for its response, or for ctx.
func (c *Client) do(ctx context.Context, req *request) (json.RawMessage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	req.V, req.ID = Version, c.next
	if dl, ok := ctx.Deadline(); ok {
		_ = c.conn.SetDeadline(dl)
	} else {
		_ = c.conn.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { _ = c.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if err := writeFrame(c.conn, req); err != nil {
		var big frameTooLarge
		if errors.As(err, &big) {
			return nil, Errorf(CodeTooLarge, "the request: %v", err)
		}
		return nil, c.fail(ctx, err)
	}
	body, err := readFrame(c.br)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	var resp response
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, Errorf(CodeBadRequest, "malformed response: %v", err)
	}
	if resp.ID != req.ID {
		return nil, Errorf(CodeBadRequest, "response %d to request %d", resp.ID, req.ID)
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	return resp.Result, nil
}

func (c *Client) fail(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return Errorf(CodeUnavailable, "the connection to the host failed: %v", err)
}
