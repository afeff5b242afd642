package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSocketPaths(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	link := filepath.Join(dir, "link")
	if err := os.Symlink(sock, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, in, want, err string
	}{
		{name: "socket", in: sock, want: sock},
		{name: "user's link followed", in: link, want: sock},
		{name: "regular file", in: file, err: "not a Unix socket"},
		{name: "directory", in: dir, err: "not a Unix socket"},
		{name: "missing", in: filepath.Join(dir, "nope"), err: "no such file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := socketPaths([]string{c.in})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "--allow-socket") {
					t.Fatalf("error %v, want one naming --allow-socket and %q", err, c.err)
				}
				return
			}
			if err != nil || len(got) != 1 || got[0] != c.want {
				t.Fatalf("got %v, %v; want [%s]", got, err, c.want)
			}
		})
	}
}
