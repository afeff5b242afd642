package ipc

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// echoArgs is heel's echo-args command's arguments.
type echoArgs struct {
	First  string `json:"first"`
	Second string `json:"second"`
	Flag   bool   `json:"flag"`
	Piped  string `json:"piped"`
}

type typedArgs struct {
	Count  int      `json:"count"`
	Ratio  float64  `json:"ratio"`
	Size   uint8    `json:"size"`
	Tags   []string `json:"tags"`
	Data   []byte   `json:"data"`
	Meta   map[string]int
	DryRun bool `json:"dry_run"`
}

type bytesArgs struct {
	Blob []byte `json:"blob"`
}

// testRouter registers the commands the tests call.
func testRouter(t testing.TB) *Router {
	t.Helper()
	r := NewRouter()
	var mu sync.Mutex
	counter := 0
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(Register(r, "echo-args", func(_ context.Context, a echoArgs, c Call) (string, error) {
		return fmt.Sprintf("first=%s second=%s flag=%v piped=%s", a.First, a.Second, a.Flag, c.Stdin), nil
	}, Positional("first", "second"), Summary("echoes its arguments")))
	must(Register(r, "counter", func(context.Context, struct{}, Call) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		counter++
		return counter, nil
	}))
	must(Register(r, "list", func(context.Context, struct{}, Call) ([]uint32, error) { return []uint32{1, 2, 3}, nil }))
	must(Register(r, "typed", func(_ context.Context, a typedArgs, _ Call) (typedArgs, error) { return a, nil }, Positional("count", "tags")))
	must(Register(r, "upper", func(_ context.Context, a struct {
		Text string `json:"text"`
	}, _ Call) (string, error) {
		return strings.ToUpper(a.Text), nil
	}, StdinArg("text")))
	must(Register(r, "blob", func(_ context.Context, a bytesArgs, _ Call) (int, error) { return len(a.Blob), nil }, StdinArg("blob")))
	must(Register(r, "panics", func(context.Context, struct{}, Call) (string, error) { panic("boom") }))
	must(Register(r, "fails", func(context.Context, struct{}, Call) (string, error) {
		return "", Errorf("not_found", "no such thing")
	}))
	must(Register(r, "plain-error", func(context.Context, struct{}, Call) (string, error) {
		return "", errors.New("it broke")
	}))
	must(Register(r, "whoami", func(_ context.Context, _ struct{}, c Call) (Call, error) { return c, nil }))
	return r
}

// serve starts a server for r on a fresh socket and returns its path.
func serve(t testing.TB, r *Router) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ipct")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "s")
	l, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{Router: r, SandboxID: "sb-test"}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return path
}

func TestRegisterRefusesBadCommands(t *testing.T) {
	type noStruct = int
	cases := []struct {
		name string
		reg  func(r *Router) error
		want string
	}{
		{"empty name", func(r *Router) error {
			return Register(r, "", func(context.Context, struct{}, Call) (int, error) { return 0, nil })
		}, "a command name is"},
		{"name with a slash", func(r *Router) error {
			return Register(r, "../evil", func(context.Context, struct{}, Call) (int, error) { return 0, nil })
		}, "a command name is"},
		{"name starting with a digit", func(r *Router) error {
			return Register(r, "1st", func(context.Context, struct{}, Call) (int, error) { return 0, nil })
		}, "a command name is"},
		{"name with a space", func(r *Router) error {
			return Register(r, "a b", func(context.Context, struct{}, Call) (int, error) { return 0, nil })
		}, "a command name is"},
		{"duplicate", func(r *Router) error {
			_ = Register(r, "twice", func(context.Context, struct{}, Call) (int, error) { return 0, nil })
			return Register(r, "twice", func(context.Context, struct{}, Call) (string, error) { return "", nil })
		}, "registered twice"},
		{"nil handler", func(r *Router) error { return Register[struct{}, int](r, "nil", nil) }, "nil handler"},
		{"arguments not a struct", func(r *Router) error {
			return Register(r, "int", func(context.Context, noStruct, Call) (int, error) { return 0, nil })
		}, "is not a struct"},
		{"positional not a field", func(r *Router) error {
			return Register(r, "p", func(context.Context, echoArgs, Call) (int, error) { return 0, nil }, Positional("nope"))
		}, `positional argument "nope" is not a field`},
		{"variadic positional not last", func(r *Router) error {
			return Register(r, "p", func(context.Context, typedArgs, Call) (int, error) { return 0, nil }, Positional("tags", "count"))
		}, "must be last"},
		{"stdin argument not a string", func(r *Router) error {
			return Register(r, "p", func(context.Context, echoArgs, Call) (int, error) { return 0, nil }, StdinArg("flag"))
		}, "must be a string"},
		{"argument named like the client's flag", func(r *Router) error {
			return Register(r, "p", func(context.Context, struct {
				H bool `json:"help"`
			}, Call) (int, error) {
				return 0, nil
			})
		}, "client's own flag"},
		{"argument with a bad name", func(r *Router) error {
			return Register(r, "p", func(context.Context, struct {
				X string `json:"a b"`
			}, Call) (int, error) {
				return 0, nil
			})
		}, "an argument name is"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewRouter()
			err := c.reg(r)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "ipc: command ") {
				t.Fatalf("Register: %v, want an error containing %q", err, c.want)
			}
			if r.Err() == nil || !strings.Contains(r.Err().Error(), c.want) {
				t.Fatalf("Router.Err() = %v, want the registration error kept", r.Err())
			}
		})
	}
	// Control: a valid command registers, and the router has no error.
	r := NewRouter()
	if err := Register(r, "ok_cmd-2", func(context.Context, echoArgs, Call) (int, error) { return 0, nil }, Positional("first")); err != nil || r.Err() != nil {
		t.Fatalf("a valid command: %v, %v", err, r.Err())
	}
	if got := r.Commands(); len(got) != 1 || got[0].Name != "ok_cmd-2" || got[0].Positional[0] != "first" {
		t.Fatalf("Commands() = %+v", got)
	}
}

func TestParseArgv(t *testing.T) {
	r := testRouter(t)
	cases := []struct {
		cmd   string
		argv  []string
		stdin []byte
		want  string // JSON of the arguments, or the error's text
		code  string // the error's code, "" for success
	}{
		{"echo-args", []string{"alpha", "beta"}, nil, `{"first":"alpha","second":"beta"}`, ""},
		{"echo-args", []string{"--first", "one", "--second=two", "--flag"}, nil, `{"first":"one","flag":true,"second":"two"}`, ""},
		{"echo-args", []string{"--flag=false", "x"}, nil, `{"first":"x","flag":false}`, ""},
		{"echo-args", []string{"--flag", "alpha"}, nil, `{"first":"alpha","flag":true}`, ""},
		{"echo-args", []string{"--", "--first", "-x"}, nil, `{"first":"--first","second":"-x"}`, ""},
		{"echo-args", []string{"a", "b", "c"}, nil, `unexpected argument "c"`, CodeUsage},
		{"echo-args", []string{"--nope"}, nil, "unknown flag --nope", CodeUsage},
		{"echo-args", []string{"--first"}, nil, "--first needs a value", CodeUsage},
		{"echo-args", []string{"-x"}, nil, "flags are --name value", CodeUsage},
		{"echo-args", []string{"--first", "a", "--first", "b"}, nil, "given twice", CodeUsage},
		{"echo-args", []string{"--flag=maybe"}, nil, "want true or false", CodeUsage},
		{"echo-args", []string{"--stdin-arg", "piped"}, []byte("in"), `{"piped":"in"}`, ""},
		{"echo-args", []string{"--stdin-arg=piped", "--piped", "flag"}, []byte("in"), `{"piped":"flag"}`, ""},
		{"echo-args", []string{"--stdin-arg", "flag"}, []byte("in"), "not a string argument", CodeUsage},
		{"echo-args", []string{"--stdin-arg"}, nil, "needs an argument name", CodeUsage},
		{"typed", []string{"3", "a", "b", "--ratio", "0.5", "--size=7", "--tags", "c"}, nil, `{"count":3,"ratio":0.5,"size":7,"tags":["a","b","c"]}`, ""},
		{"typed", []string{"-3"}, nil, `{"count":-3}`, ""},
		{"typed", []string{"x"}, nil, "want an integer", CodeUsage},
		{"typed", []string{"--size", "300"}, nil, "want a non-negative integer of 8 bits", CodeUsage},
		{"typed", []string{"--Meta", `{"a":1}`, "--dry-run"}, nil, `{"Meta":{"a":1},"dry_run":true}`, ""},
		{"typed", []string{"--Meta", `{a}`}, nil, "want JSON", CodeUsage},
		{"typed", []string{"--data", "hi"}, nil, `{"data":"aGk="}`, ""},
		{"upper", nil, []byte("abc"), `{"text":"abc"}`, ""},
		{"upper", []string{"--text", "given"}, []byte("abc"), `{"text":"given"}`, ""},
		{"upper", nil, []byte{0xff}, "not UTF-8", CodeUsage},
		{"blob", nil, []byte{0xff, 0}, `{"blob":"/wA="}`, ""},
		{"counter", []string{"x"}, nil, "takes no positional arguments", CodeUsage},
		{"counter", []string{"-h"}, nil, "-h asks for the usage", CodeUsage},
	}
	for _, c := range cases {
		t.Run(c.cmd+" "+strings.Join(c.argv, " "), func(t *testing.T) {
			got, err := r.lookup(c.cmd).parseArgv(c.argv, c.stdin)
			if c.code != "" {
				var e *Error
				if !errors.As(err, &e) || e.Code != c.code || !strings.Contains(e.Message, c.want) {
					t.Fatalf("parseArgv = %s, %v; want a %s error containing %q", got, err, c.code, c.want)
				}
				return
			}
			if err != nil || string(got) != c.want {
				t.Fatalf("parseArgv = %s, %v; want %s", got, err, c.want)
			}
		})
	}
}

// call makes one command-line call over a fresh connection.
func call(t *testing.T, path, name string, argv []string, stdin []byte) (json.RawMessage, error) {
	t.Helper()
	c, err := Dial(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.Run(context.Background(), name, Input{Args: argv, Stdin: stdin, Dir: "/work"})
}

func TestServerCalls(t *testing.T) {
	path := serve(t, testRouter(t))
	cases := []struct {
		name  string
		argv  []string
		stdin []byte
		want  string
		code  string
	}{
		{"echo-args", []string{"alpha", "beta"}, nil, `"first=alpha second=beta flag=false piped="`, ""},
		{"echo-args", []string{"alpha"}, []byte("from stdin"), `"first=alpha second= flag=false piped=from stdin"`, ""},
		{"list", nil, nil, `[1,2,3]`, ""},
		{"upper", nil, []byte("shout"), `"SHOUT"`, ""},
		{"whoami", nil, []byte{}, `{"Command":"whoami","Dir":"/work","Stdin":"","SandboxID":"sb-test"}`, ""},
		{"whoami", nil, nil, `{"Command":"whoami","Dir":"/work","Stdin":null,"SandboxID":"sb-test"}`, ""},
		{"panics", nil, nil, "handler panicked: boom", CodePanic},
		{"fails", nil, nil, "no such thing", "not_found"},
		{"plain-error", nil, nil, "it broke", CodeFailed},
		{"no-such-command", nil, nil, `unknown command "no-such-command"`, CodeUnknownCommand},
		{"echo-args", []string{"--bogus"}, nil, "unknown flag --bogus", CodeUsage},
	}
	for _, c := range cases {
		t.Run(c.name+" "+strings.Join(c.argv, " "), func(t *testing.T) {
			got, err := call(t, path, c.name, c.argv, c.stdin)
			if c.code != "" {
				var e *Error
				if !errors.As(err, &e) || e.Code != c.code || !strings.Contains(e.Message, c.want) {
					t.Fatalf("call = %s, %v; want a %s error containing %q", got, err, c.code, c.want)
				}
				return
			}
			if err != nil || string(got) != c.want {
				t.Fatalf("call = %s, %v; want %s", got, err, c.want)
			}
		})
	}
}

// TestTypedClient: the library client's typed form, state across calls
// on one connection, and the list of commands.
func TestTypedClient(t *testing.T) {
	path := serve(t, testRouter(t))
	ctx := context.Background()
	c, err := Dial(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for want := 1; want <= 3; want++ {
		var n int
		if err := c.Call(ctx, "counter", nil, &n); err != nil || n != want {
			t.Fatalf("counter = %d, %v; want %d", n, err, want)
		}
	}
	var back typedArgs
	in := typedArgs{Count: 2, Tags: []string{"x"}, Data: []byte{0, 1}}
	if err := c.Call(ctx, "typed", in, &back); err != nil || back.Count != 2 || back.Tags[0] != "x" || !bytes.Equal(back.Data, in.Data) {
		t.Fatalf("typed = %+v, %v", back, err)
	}
	err = c.Call(ctx, "typed", map[string]any{"unknown": 1}, &back)
	if !errors.Is(err, &Error{Code: CodeUsage}) {
		t.Fatalf("an unknown argument: %v, want a usage error", err)
	}
	list, err := c.Commands(ctx)
	if err != nil || len(list) != 10 || list[0].Name != "blob" {
		t.Fatalf("Commands = %+v, %v", list, err)
	}
	u, err := c.Usage(ctx, "echo-args")
	if err != nil || !strings.Contains(u, "usage: echo-args [flags] [FIRST] [SECOND]") || !strings.Contains(u, "echoes its arguments") {
		t.Fatalf("Usage = %q, %v", u, err)
	}
}

// rawExchange writes raw bytes on a fresh connection, half-closes it when
// asked, and reads back one response.
func rawExchange(t *testing.T, path string, raw []byte, halfClose bool) (response, error) {
	t.Helper()
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write(raw); err != nil {
		return response{}, err
	}
	if halfClose {
		_ = conn.(*net.UnixConn).CloseWrite()
	}
	body, err := readFrame(conn)
	if err != nil {
		return response{}, err
	}
	var resp response
	return resp, json.Unmarshal(body, &resp)
}

func frame(body string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	return append(b, body...)
}

// TestBadFrames: every frame the server cannot read gets a clear error
// response, and the server keeps serving.
func TestBadFrames(t *testing.T) {
	path := serve(t, testRouter(t))
	huge := binary.BigEndian.AppendUint32(nil, MaxFrameSize+1)
	cases := []struct {
		name      string
		raw       []byte
		halfClose bool
		code      string
		want      string
	}{
		{"malformed JSON", frame(`{"v":1,"cmd":`), false, CodeBadRequest, "malformed request"},
		{"not an object", frame(`[1,2]`), false, CodeBadRequest, "malformed request"},
		{"wrong version", frame(`{"v":99,"id":5,"cmd":"counter"}`), false, CodeBadRequest, "protocol version 99"},
		{"empty frame", frame(""), false, CodeBadRequest, "empty frame"},
		{"oversized frame", huge, false, CodeTooLarge, "exceeds the 16777216-byte limit"},
		{"truncated body", frame(`{"v":1,"cmd":"counter"}`)[:10], true, CodeBadRequest, "truncated frame"},
		{"truncated length", []byte{0, 0}, true, CodeBadRequest, "truncated frame"},
		{"unknown command", frame(`{"v":1,"id":7,"cmd":"nope"}`), false, CodeUnknownCommand, `unknown command "nope"`},
		{"bad typed arguments", frame(`{"v":1,"id":8,"cmd":"typed","args":{"count":"x"}}`), false, CodeUsage, "arguments"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, err := rawExchange(t, path, c.raw, c.halfClose)
			if err != nil || resp.Error == nil || resp.Error.Code != c.code || !strings.Contains(resp.Error.Message, c.want) {
				t.Fatalf("response %+v (error %+v), %v; want %s containing %q", resp, resp.Error, err, c.code, c.want)
			}
			// The server still serves.
			if got, err := call(t, path, "list", nil, nil); err != nil || string(got) != "[1,2,3]" {
				t.Fatalf("after a bad frame: %s, %v", got, err)
			}
		})
	}
	// A malformed frame leaves its connection usable for the next one.
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write(append(frame(`{nope`), frame(`{"v":1,"id":2,"cmd":"list","argv":[]}`)...))
	for i, want := range []string{CodeBadRequest, ""} {
		body, err := readFrame(conn)
		var resp response
		if err == nil {
			err = json.Unmarshal(body, &resp)
		}
		if err != nil || (want == "") != (resp.Error == nil) || (want != "" && resp.Error.Code != want) {
			t.Fatalf("response %d on one connection: %s, %v", i, body, err)
		}
	}
}

// TestOversizedRequestClientSide: the client refuses to send a frame over
// the limit, and the command-line client refuses stdin over it.
func TestOversizedRequestClientSide(t *testing.T) {
	path := serve(t, testRouter(t))
	_, err := call(t, path, "blob", nil, make([]byte, MaxFrameSize))
	if !errors.Is(err, &Error{Code: CodeTooLarge}) {
		t.Fatalf("a request over the limit: %v, want too_large", err)
	}
	var stderr bytes.Buffer
	code := Invocation{Endpoint: path, Name: "blob", Stdin: bytes.NewReader(make([]byte, maxStdin+1)), Stderr: &stderr}.Run(context.Background())
	if code != ExitFailed || !strings.Contains(stderr.String(), "over the") {
		t.Fatalf("stdin over the limit: %d %q", code, stderr.String())
	}
	// Control: the largest stdin allowed goes through.
	var stdout bytes.Buffer
	code = Invocation{Endpoint: path, Name: "blob", Stdin: bytes.NewReader(make([]byte, maxStdin)), Stdout: &stdout, Stderr: &stderr}.Run(context.Background())
	if code != 0 || strings.TrimSpace(stdout.String()) != fmt.Sprint(maxStdin) {
		t.Fatalf("the largest stdin: %d %q %q", code, stdout.String(), stderr.String())
	}
}

// TestConcurrentCalls: 100 calls at once, each on its own connection, are
// all served, and the shared counter ends at 100 with every value seen
// once.
func TestConcurrentCalls(t *testing.T) {
	path := serve(t, testRouter(t))
	const n = 100
	var wg sync.WaitGroup
	seen := make([]int, n)
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := Dial(context.Background(), path)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			if err := c.Call(context.Background(), "counter", nil, &seen[i]); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := map[int]bool{}
	for _, v := range seen {
		got[v] = true
	}
	if len(got) != n || !got[1] || !got[n] {
		t.Fatalf("counter values %v: want 1..%d once each", seen, n)
	}
}

func TestSocketMode(t *testing.T) {
	path := serve(t, NewRouter())
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %s: mode %v, want a 0600 socket", path, fi.Mode())
	}
	long := "/tmp/" + strings.Repeat("x", MaxSocketPath)
	if _, err := Listen(long); err == nil || !strings.Contains(err.Error(), "limit of a Unix socket address") {
		t.Fatalf("Listen(%d bytes) = %v, want the sun_path limit", len(long), err)
	}
}

// failReader fails the test if anything reads it: -h must not.
type failReader struct{ t *testing.T }

func (f failReader) Read([]byte) (int, error) {
	f.t.Error("stdin was read")
	return 0, io.EOF
}

// TestInvocation: the command-line client's output, errors and exit
// statuses, as a shim shows them.
func TestInvocation(t *testing.T) {
	path := serve(t, testRouter(t))
	cases := []struct {
		name             string
		args             []string
		stdin            io.Reader
		code             int
		stdout, stderr   string
		stdoutHasNewline bool
	}{
		{"echo-args", []string{"alpha", "beta"}, nil, 0, "first=alpha second=beta flag=false piped=", "", false},
		{"echo-args", []string{"alpha"}, strings.NewReader("from stdin"), 0, "first=alpha second= flag=false piped=from stdin", "", false},
		{"list", nil, nil, 0, "[\n  1,\n  2,\n  3\n]\n", "", true},
		{"echo-args", []string{"--nope"}, nil, ExitUsage, "", "echo-args: unknown flag --nope (see echo-args -h)\n", false},
		{"panics", nil, nil, ExitFailed, "", "panics: the command's handler panicked: boom\n", false},
		{"fails", nil, nil, ExitFailed, "", "fails: no such thing\n", false},
		{"nope", nil, nil, ExitFailed, "", "nope: unknown command \"nope\"\n", false},
		{"upper", []string{"-h"}, failReader{t}, 0, "usage: upper [flags]\n", "", false},
		{"echo-args", []string{"--", "-h"}, nil, 0, "first=-h second= flag=false piped=", "", false},
	}
	for _, c := range cases {
		t.Run(c.name+" "+strings.Join(c.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Invocation{Endpoint: path, Name: c.name, Args: c.args, Stdin: c.stdin, Stdout: &out, Stderr: &errb}.Run(context.Background())
			if code != c.code || !strings.HasPrefix(out.String(), c.stdout) || errb.String() != c.stderr {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, out.String(), errb.String(), c.code, c.stdout, c.stderr)
			}
		})
	}
	var errb bytes.Buffer
	t.Setenv(EndpointEnv, "")
	if code := (Invocation{Name: "x", Stderr: &errb}).Run(context.Background()); code != ExitFailed || !strings.Contains(errb.String(), EndpointEnv+" is not set") {
		t.Fatalf("without an endpoint: %d %q", code, errb.String())
	}
	errb.Reset()
	if code := (Invocation{Endpoint: path + ".gone", Name: "x", Stderr: &errb}).Run(context.Background()); code != ExitFailed || !strings.Contains(errb.String(), "x: cannot reach the host") {
		t.Fatalf("an endpoint that does not answer: %d %q", code, errb.String())
	}
}

// TestCloseWaitsAndCancels: Close cancels a running handler's context and
// waits for it; Serve then returns ErrServerClosed.
func TestCloseWaitsAndCancels(t *testing.T) {
	r := NewRouter()
	started := make(chan struct{})
	var finished bool
	if err := Register(r, "block", func(ctx context.Context, _ struct{}, _ Call) (string, error) {
		close(started)
		<-ctx.Done()
		time.Sleep(50 * time.Millisecond)
		finished = true
		return "", ctx.Err()
	}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	l, err := Listen(filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{Router: r}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	go func() {
		if c, err := Dial(context.Background(), filepath.Join(dir, "s")); err == nil {
			c.Call(context.Background(), "block", nil, nil)
		}
	}()
	<-started
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if !finished {
		t.Fatal("Close returned before the handler did")
	}
	if err := <-done; !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Serve = %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "s")); !os.IsNotExist(err) {
		t.Fatalf("the socket is left behind: %v", err)
	}
}

// TestBudget: frames wait while the bytes held would pass frameBudget,
// proceed once they fit, and stop waiting when the server closes.
func TestBudget(t *testing.T) {
	var b budget
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	full, err := b.acquire(ctx, frameBudget)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		rel, err := b.acquire(ctx, 1)
		if err == nil {
			rel()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("a frame past the budget did not wait: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	full()
	full() // releasing twice returns the bytes once
	if err := <-got; err != nil {
		t.Fatalf("after the release: %v", err)
	}
	if b.used != 0 {
		t.Fatalf("used = %d after every release", b.used)
	}
	hold, _ := b.acquire(ctx, frameBudget)
	defer hold()
	go func() { _, err := b.acquire(ctx, 1); got <- err }()
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("a waiting frame at Close: %v", err)
	}
}
