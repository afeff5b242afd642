package linux

import (
	"os"
	"reflect"
	"testing"

	"golang.org/x/sys/unix"
)

func socketPair(t *testing.T) (int, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

func TestMessageRoundTripWithFiles(t *testing.T) {
	a, b := socketPair(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	sent := commandSpec{Path: "/bin/echo", Args: []string{"echo", "hi"}, Env: []string{"A=1"}, Dir: "/", Files: 2, Pty: true}
	if err := sendMessage(a, &sent, []int{int(r.Fd()), int(w.Fd())}); err != nil {
		t.Fatal(err)
	}
	var got commandSpec
	fds, err := recvMessage(b, &got)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFDs(fds)
	if !reflect.DeepEqual(got, sent) || len(fds) != 2 {
		t.Fatalf("got %+v with %d fds, want %+v with 2", got, len(fds), sent)
	}
	// The received write end works, and is close-on-exec.
	if _, err := unix.Write(fds[1], []byte("x")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if n, _ := r.Read(buf); n != 1 || buf[0] != 'x' {
		t.Fatal("received descriptor does not reach the pipe")
	}
	flags, _ := unix.FcntlInt(uintptr(fds[1]), unix.F_GETFD, 0)
	if flags&unix.FD_CLOEXEC == 0 {
		t.Fatal("received descriptor is not close-on-exec")
	}
}

func TestRecvMessageErrors(t *testing.T) {
	cases := []struct {
		name string
		send func(fd int)
	}{
		{"closed", func(fd int) { unix.Close(fd) }},
		{"not json", func(fd int) { unix.Write(fd, []byte("{nope")) }},
		{"too large", func(fd int) { unix.Write(fd, make([]byte, maxMessage+1)) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fds[1])
			tc.send(fds[0])
			var v commandSpec
			if _, err := recvMessage(fds[1], &v); err == nil {
				t.Fatal("recvMessage accepted it")
			}
			if tc.name != "closed" {
				unix.Close(fds[0])
			}
		})
	}
}

func TestSendMessageRefusesHugeSpec(t *testing.T) {
	a, _ := socketPair(t)
	big := helperSpec{ReadOnly: make([]string, maxMessage/4)}
	for i := range big.ReadOnly {
		big.ReadOnly[i] = "/x"
	}
	if err := sendMessage(a, &big, nil); err == nil {
		t.Fatal("a spec over the limit was sent")
	}
}

// FuzzRecvMessage feeds arbitrary bytes to the helper's message decoder: it
// must never panic, and must reject what is not a command.
func FuzzRecvMessage(f *testing.F) {
	f.Add([]byte(`{"path":"/bin/true","args":["true"],"files":3}`))
	f.Add([]byte(`{"path":1}`))
	f.Add([]byte{0xff, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Skip("no socketpair")
		}
		defer unix.Close(fds[0])
		defer unix.Close(fds[1])
		if len(b) == 0 || len(b) > maxMessage {
			return
		}
		if _, err := unix.Write(fds[0], b); err != nil {
			return
		}
		var v commandSpec
		got, _ := recvMessage(fds[1], &v)
		closeFDs(got)
	})
}
