package linux

import (
	"io/fs"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"golang.org/x/sys/unix"
)

// fakeTree returns a readDirFunc over the given paths (a trailing slash
// marks a directory; "->" a symbolic link).
func fakeTree(paths ...string) readDirFunc {
	m := fstest.MapFS{}
	for _, p := range paths {
		name := strings.TrimPrefix(strings.TrimSuffix(p, "/"), "/")
		switch {
		case strings.HasSuffix(p, "/"):
			m[name] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
		case strings.Contains(p, "->"):
			m[strings.TrimSpace(strings.Split(name, "->")[0])] = &fstest.MapFile{Mode: fs.ModeSymlink | 0o777}
		default:
			m[name] = &fstest.MapFile{Data: []byte("x")}
		}
	}
	return func(dir string) ([]fs.DirEntry, error) {
		name := strings.TrimPrefix(dir, "/")
		if name == "" {
			name = "."
		}
		return fs.ReadDir(m, name)
	}
}

func TestCarve(t *testing.T) {
	const all = uint64(0xffff)
	const rd = unix.LANDLOCK_ACCESS_FS_READ_DIR
	tree := fakeTree("/tmp/h/", "/tmp/h/.ssh/", "/tmp/h/doc", "/home/", "/home/u/", "/home/u/.ssh/", "/home/u/.ssh/id", "/home/u/proj/",
		"/home/u/notes.txt", "/home/u/.config/", "/home/u/.config/gh/", "/home/u/.config/nvim/",
		"/home/u/link -> /home/u/.ssh", "/home/v/", "/tmp/", "/tmp/a", "/usr/")
	tests := []struct {
		name   string
		rules  []llRule
		carved []carveRule
		want   []string // "path access"
	}{
		{"nothing carved keeps the rule",
			[]llRule{{Path: "/home/u", Access: all}}, nil,
			[]string{"/home/u ffff"}},
		{"carved path outside the rule",
			[]llRule{{Path: "/usr", Access: all}}, []carveRule{{Path: "/home/u/.ssh"}},
			[]string{"/usr ffff"}},
		{"protected inside a granted home",
			[]llRule{{Path: "/home/u", Access: all}},
			[]carveRule{{Path: "/home/u/.ssh"}, {Path: "/home/u/.config/gh"}, {Path: "/home/u/.netrc"}},
			[]string{"/home/u 8", "/home/u/.config 8", "/home/u/.config/nvim ffff", "/home/u/notes.txt ffff", "/home/u/proj ffff"}},
		{"explicit grant inside a protected path is kept",
			[]llRule{{Path: "/home/u/.ssh/id", Access: 3}},
			[]carveRule{{Path: "/home/u/.ssh"}},
			[]string{"/home/u/.ssh/id 3"}},
		{"keep some rights",
			[]llRule{{Path: "/", Access: all}},
			[]carveRule{{Path: "/tmp", Keep: all &^ 1}, {Path: "/home/u/.ssh"}},
			[]string{"/ 8", "/home 8", "/home/u 8", "/home/u/.config ffff", "/home/u/notes.txt ffff", "/home/u/proj ffff", "/home/v ffff", "/tmp fffe", "/usr ffff"}},
		{"protected inside a carved directory",
			[]llRule{{Path: "/", Access: all}},
			[]carveRule{{Path: "/tmp", Keep: all &^ 1}, {Path: "/tmp/h/.ssh"}, {Path: "/home"}},
			[]string{"/ 8", "/tmp 8", "/tmp/a fffe", "/tmp/h 8", "/tmp/h/doc fffe", "/usr ffff"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, r := range carve(tt.rules, tt.carved, tree) {
				got = append(got, r.Path+" "+strconv.FormatUint(r.Access, 16))
			}
			sort.Strings(got)
			sort.Strings(tt.want)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	if rd != ancestorRights {
		t.Fatal("ancestors must keep exactly READ_DIR")
	}
}
