package fileserve

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestServerReadsNoSpecialFile: a read of anything that is not a regular
// file fails at once as not_regular_file naming its type, whatever errno
// the open met (a socket's ENXIO, a driverless device's ENXIO or ENODEV, a
// directory, a FIFO, a final link), never as internal. The positive
// control: a regular file beside them reads.
func TestServerReadsNoSpecialFile(t *testing.T) {
	work := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("unix", filepath.Join(work, "sock"))
	must(err)
	defer l.Close()
	must(syscall.Mkfifo(filepath.Join(work, "fifo"), 0o644))
	must(os.Mkdir(filepath.Join(work, "dir"), 0o755))
	must(os.WriteFile(filepath.Join(work, "plain"), []byte("plain"), 0o644))
	must(os.Symlink("plain", filepath.Join(work, "link")))
	type row struct {
		path, kind string
	}
	rows := []row{
		{"sock", TypeSocket}, {"fifo", TypeFIFO}, {"dir", TypeDir}, {"link", TypeSymlink},
		// Device nodes, through a read-only place at /dev: /dev/null
		// opens; /dev/tty, with no controlling terminal, fails ENXIO.
		{"/dev/null", TypeDevice}, {"/dev/tty", TypeDevice},
	}
	// A character device no driver answers (major 240, for local use):
	// its open fails ENXIO or ENODEV. Only root may make one.
	if err := unix.Mknod(filepath.Join(work, "nodriver"), unix.S_IFCHR|0o666, int(unix.Mkdev(240, 77))); err == nil {
		rows = append(rows, row{"nodriver", TypeDevice})
	} else {
		t.Logf("no driverless device node (mknod: %v); the /dev rows stand in", err)
	}
	s, err := open(Config{WorkDir: work, Places: []Place{{work, true}, {"/dev", false}}, MaxFileBytes: 1 << 20, MaxReadBytes: 1 << 20, MaxEntries: 10})
	must(err)
	for _, tc := range rows {
		start := time.Now()
		rep := s.handle(Request{Op: OpRead, Path: tc.path})
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: took %v", tc.path, d)
		}
		if rep.Error == nil || rep.Error.Code != CodeNotRegular || rep.Error.Kind != tc.kind {
			t.Errorf("read %s: %+v; want %s of kind %s", tc.path, rep.Error, CodeNotRegular, tc.kind)
		}
	}
	if rep := s.handle(Request{Op: OpRead, Path: "plain"}); rep.Error != nil || string(rep.Data) != "plain" {
		t.Errorf("read of a regular file (the control): %+v %q", rep.Error, rep.Data)
	}
}

// TestFaultOfNotRegularErrnos: an errno that says the object is no
// regular file maps to not_regular_file, never internal.
func TestFaultOfNotRegularErrnos(t *testing.T) {
	for _, tc := range []struct {
		errno syscall.Errno
		code  string
	}{
		{unix.ENXIO, CodeNotRegular}, {unix.ENODEV, CodeNotRegular}, {unix.EISDIR, CodeNotRegular},
		{unix.ENOENT, CodeNotFound}, {unix.EACCES, CodeRefused}, {unix.EIO, CodeInternal},
	} {
		if rep := faultOf(tc.errno); rep.Error.Code != tc.code {
			t.Errorf("faultOf(%v) = %+v; want %s", tc.errno, rep.Error, tc.code)
		}
	}
}
