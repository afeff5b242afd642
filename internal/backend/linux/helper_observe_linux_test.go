package linux

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func TestDescribeSocket(t *testing.T) {
	for _, tc := range []struct {
		pair               bool
		domain, typ, proto int32
		inetTCP            bool
		subject            string
		detail             string // a part of it
	}{
		{false, unix.AF_INET, unix.SOCK_DGRAM, 0, true, "udp socket (AF_INET, SOCK_DGRAM)", "DNS goes to moat's resolver over TCP"},
		{false, unix.AF_INET6, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC | unix.SOCK_NONBLOCK, unix.IPPROTO_UDP, true, "udp socket (AF_INET6, SOCK_DGRAM, protocol 17)", "only Unix sockets and plain TCP"},
		{false, unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP, true, "raw socket (AF_INET, SOCK_RAW, protocol 1)", "only Unix sockets and plain TCP"},
		{false, unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP, true, "mptcp socket (AF_INET, SOCK_STREAM, protocol 262)", "plain TCP"},
		{false, unix.AF_INET, unix.SOCK_STREAM, 0, false, "socket (AF_INET, SOCK_STREAM)", "only Unix sockets"},
		{false, unix.AF_NETLINK, unix.SOCK_DGRAM, 0, true, "socket (AF_NETLINK, SOCK_DGRAM)", "only"},
		{false, unix.AF_PACKET, unix.SOCK_RAW, 768, true, "raw socket (AF_PACKET, SOCK_RAW, protocol 768)", "only"},
		{false, 99, 14, -1, true, "socket (family 99, type 14, protocol -1)", "only"},
		{true, unix.AF_INET, unix.SOCK_STREAM, 0, true, "socketpair (AF_INET, SOCK_STREAM)", "only"},
	} {
		t.Run(tc.subject, func(t *testing.T) {
			subject, detail := describeSocket(tc.pair, tc.domain, tc.typ, tc.proto, tc.inetTCP)
			if subject != tc.subject || !strings.Contains(detail, tc.detail) {
				t.Errorf("got %q: %q; want %q: ...%q...", subject, detail, tc.subject, tc.detail)
			}
		})
	}
	if _, d := describeSocket(false, unix.AF_INET, unix.SOCK_STREAM, 0, false); strings.Contains(d, "TCP") {
		t.Errorf("without TCP allowed the detail %q names TCP", d)
	}
}

// TestRefusalRecordBounded: a sandbox that is refused without end keeps
// at most maxRefusals of each kind and maxRefusalBytes of their text, each
// refusal once, for the supervisor's whole life; and the reply that
// carries the worst case (every byte escaped by JSON) fits one control
// message.
func TestRefusalRecordBounded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		subject func(i int) string
	}{
		{"short", func(i int) string { return fmt.Sprintf("/w/app%d", i) }},
		{"long", func(i int) string { return fmt.Sprintf("/w/%d/%s", i, strings.Repeat("a", 5000)) }},
		{"escaped", func(i int) string { return fmt.Sprintf("%d%s", i, strings.Repeat("\x01\xff", 3000)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &sockGuard{notify: -1}
			var all []refusedCall
			for round := 0; round < 3; round++ {
				for i := 0; i < 10000; i++ {
					for _, kind := range []string{refusedUnixSocket, refusedExec, refusedSocket} {
						g.refuse(refusedCall{Kind: kind, Subject: tc.subject(i), Detail: "why"})
					}
				}
				got := g.drain()
				var kept []refusedCall
				dropped := map[string]int{}
				for _, r := range got {
					if r.Dropped > 0 {
						dropped[r.Kind] += r.Dropped
					} else {
						kept = append(kept, r)
					}
				}
				if round > 0 && len(kept) != 0 {
					t.Fatalf("round %d: %d more refusals after the bounds were reached", round, len(kept))
				}
				for _, kind := range []string{refusedUnixSocket, refusedExec, refusedSocket} {
					if dropped[kind] == 0 {
						t.Fatalf("round %d: %s: the refusals past the bounds were not counted", round, kind)
					}
				}
				all = append(all, kept...)
				b, err := json.Marshal(&reply{Refused: got})
				if err != nil {
					t.Fatal(err)
				}
				if len(b) > maxMessage {
					t.Fatalf("the reply takes %d bytes, more than a control message's %d", len(b), maxMessage)
				}
			}
			count, size := map[string]int{}, map[string]int{}
			seen := map[refusedCall]bool{}
			for _, r := range all {
				if seen[r] {
					t.Fatalf("%q recorded twice", r.Subject)
				}
				seen[r] = true
				if len(r.Subject) > maxRefusalSubject+3 {
					t.Fatalf("a subject of %d bytes is kept", len(r.Subject))
				}
				count[r.Kind]++
				size[r.Kind] += len(r.Subject) + len(r.Detail)
			}
			for kind, n := range count {
				if n == 0 || n > maxRefusals || size[kind] > maxRefusalBytes {
					t.Errorf("%s: %d refusals, %d bytes; want 1..%d and at most %d bytes", kind, n, size[kind], maxRefusals, maxRefusalBytes)
				}
			}
		})
	}
}

// TestRefusalRecordKeepsNetworkClasses attacks the bound: 64 harmless
// refusals spend the record, then a UDP socket is refused. The first of
// each network class is kept all the same, the second is counted, and so
// is the harmless 65th; the control is a refusal of no class, counted
// and not kept.
func TestRefusalRecordKeepsNetworkClasses(t *testing.T) {
	g := &sockGuard{notify: -1}
	for i := 0; i < maxRefusals; i++ {
		g.refuse(refusedCall{Kind: refusedSocket, Subject: fmt.Sprintf("socket (family %d)", 100+i)})
	}
	if got := g.drain(); len(got) != maxRefusals {
		t.Fatalf("%d refusals kept, want %d", len(got), maxRefusals)
	}
	udp, udpDetail := describeSocket(false, unix.AF_INET, unix.SOCK_DGRAM, 0, true)
	udp6, _ := describeSocket(false, unix.AF_INET6, unix.SOCK_DGRAM, 17, true)
	cases := []struct {
		name  string
		r     refusedCall
		class string
		kept  bool
	}{
		{"udp past the record", refusedCall{Kind: refusedSocket, Subject: udp, Detail: udpDetail}, socketClass(unix.AF_INET, unix.SOCK_DGRAM), true},
		{"udp6 with a protocol", refusedCall{Kind: refusedSocket, Subject: udp6}, socketClass(unix.AF_INET6, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC), true},
		{"udp again, another protocol: same class", refusedCall{Kind: refusedSocket, Subject: udp + "x"}, socketClass(unix.AF_INET, unix.SOCK_DGRAM), false},
		{"control: no class", refusedCall{Kind: refusedSocket, Subject: "socket (family 200)"}, socketClass(200, unix.SOCK_DGRAM), false},
		{"control: an exec past nothing", refusedCall{Kind: refusedExec, Subject: "/w/app"}, "", true},
	}
	dropped := 0
	for _, c := range cases {
		g.refuseClass(c.r, c.class)
		got := g.drain()
		kept := len(got) > 0 && got[0].Dropped == 0 && got[0] == c.r
		if kept != c.kept {
			t.Errorf("%s: kept = %v, want %v (%v)", c.name, kept, c.kept, got)
		}
		if !c.kept {
			dropped++
			if len(got) != 1 || got[0].Dropped != 1 || got[0].Kind != c.r.Kind {
				t.Errorf("%s: want one count of 1 dropped, got %v", c.name, got)
			}
		}
	}
	if dropped != 2 {
		t.Fatalf("%d dropped", dropped)
	}
}

// FuzzRefusalReply: whatever subjects a sandbox makes the supervisor
// record, the reply that carries them fits one control message.
func FuzzRefusalReply(f *testing.F) {
	f.Add("/w/app", uint16(1))
	f.Add(strings.Repeat("\x00\xff\"\\", 400), uint16(500))
	f.Add("", uint16(0))
	f.Fuzz(func(t *testing.T, s string, n uint16) {
		g := &sockGuard{notify: -1}
		for i := 0; i <= int(n%600); i++ {
			for _, kind := range []string{refusedUnixSocket, refusedExec, refusedSocket} {
				g.refuse(refusedCall{Kind: kind, Subject: fmt.Sprint(i) + s + s, Detail: s})
			}
		}
		b, err := json.Marshal(&reply{Refused: g.drain()})
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > maxMessage {
			t.Fatalf("the reply takes %d bytes, more than %d", len(b), maxMessage)
		}
	})
}

// TestReadCString reads strings of this process as the supervisor reads
// a caller's: whole up to the bound, across a page boundary, and ending
// right before an unmapped page.
func TestReadCString(t *testing.T) {
	page := os.Getpagesize()
	mem, err := unix.Mmap(-1, 0, 3*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	if err := unix.Mprotect(mem[2*page:], unix.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	base := uint64(uintptr(unsafe.Pointer(&mem[0])))
	put := func(off int, s string) uint64 {
		copy(mem[off:], s)
		mem[off+len(s)] = 0
		return base + uint64(off)
	}
	tid := unix.Gettid()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, tc := range []struct {
		name string
		addr uint64
		max  int
		want string
		ok   bool
	}{
		{"short", put(10, "/usr/bin/true"), 4096, "/usr/bin/true", true},
		{"across a page", put(page-3, "/abc/def"), 4096, "/abc/def", true},
		{"ends at the unmapped page", put(2*page-6, "/tool"), 4096, "/tool", true},
		{"empty", put(100, ""), 4096, "", true},
		{"too long", put(200, strings.Repeat("x", 50)), 20, "", false},
		{"unmapped", base + uint64(2*page), 4096, "", false},
		{"null", 0, 4096, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := readCString(tid, tc.addr, tc.max)
			if got != tc.want || ok != tc.ok {
				t.Errorf("got %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
	// No NUL before the unmapped page: unreadable, as the kernel says.
	for i := page; i < 2*page; i++ {
		mem[i] = 'a'
	}
	if got, ok := readCString(tid, base+uint64(page), 8192); ok {
		t.Errorf("a string running into an unmapped page read as %d bytes", len(got))
	}
}

// TestWxRefuses: only an executable regular file on a writable noexec
// mount is write-xor-execute's; the test's own binary, a directory, and
// (where /dev/shm is noexec here) a file without an execute bit are not.
func TestWxRefuses(t *testing.T) {
	open := func(p string) int {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(fd) })
		return fd
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if wxRefuses(open(exe)) {
		t.Errorf("the test binary %s counts as refused", exe)
	}
	if wxRefuses(open(filepath.Dir(exe))) {
		t.Errorf("a directory counts as refused")
	}
	var sfs unix.Statfs_t
	if unix.Statfs("/dev/shm", &sfs) != nil || sfs.Flags&unix.ST_NOEXEC == 0 || sfs.Flags&unix.ST_RDONLY != 0 {
		t.Logf("/dev/shm is not a writable noexec mount here; the noexec case is covered by test/escape TestExecRefusal*")
		return
	}
	for _, tc := range []struct {
		mode uint32
		want bool
	}{{0o755, true}, {0o644, false}, {0o100, true}} {
		p := filepath.Join("/dev/shm", fmt.Sprintf("moat-wx-%d-%o", os.Getpid(), tc.mode))
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(p) })
		if err := os.Chmod(p, os.FileMode(tc.mode)); err != nil {
			t.Fatal(err)
		}
		if got := wxRefuses(open(p)); got != tc.want {
			t.Errorf("mode %o on /dev/shm: %v, want %v", tc.mode, got, tc.want)
		}
	}
}
