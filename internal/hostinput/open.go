package hostinput

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// open resolves path, opens it without following a link in its last
// component, and checks that what was opened is a regular file at the
// path resolved.
func open(path string, o Options) (*Input, error) {
	in, real, links, err := resolveInput(path, o)
	if err != nil {
		return nil, err
	}
	f, err := openNoFollow(real)
	if err != nil {
		return nil, in.fail(err)
	}
	in.f = f
	if kp := kernelPath(f); kp != "" && kp != real {
		in.close()
		return nil, in.fail(fmt.Errorf("changed while it was opened (%s became %s)", real, kp))
	}
	// Nothing is read from what is not a regular file (a FIFO, a device).
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		in.close()
		if err == nil {
			err = errors.New("not a regular file")
		}
		return nil, in.fail(err)
	}
	in.Real, in.links = real, links
	return in, nil
}

// resolveInput makes the Input of path and resolves it.
func resolveInput(path string, o Options) (*Input, string, []string, error) {
	subject := o.Subject
	if subject == "" {
		subject = "file"
	}
	in := &Input{Name: path, subject: subject, store: o.Store}
	if path == "" {
		return nil, "", nil, in.fail(errors.New("empty path"))
	}
	abs := path
	if !filepath.IsAbs(abs) {
		wd, err := os.Getwd()
		if err != nil {
			return nil, "", nil, in.fail(err)
		}
		abs = wd + string(filepath.Separator) + path // not cleaned: a/.. follows a as the kernel does
	}
	real, links, err := resolve(abs)
	if err != nil {
		return nil, "", nil, in.fail(err)
	}
	return in, real, links, nil
}

// resolve follows every link of the absolute path p as the kernel would,
// and returns the real path and the links followed, each by its own real
// path.
func resolve(p string) (string, []string, error) {
	if filepath.Separator != '/' {
		r, err := filepath.EvalSymlinks(p)
		return r, nil, err
	}
	todo := strings.Split(p, "/")
	cur, hops := "/", 0
	var links []string
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil {
			return "", nil, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return "", nil, syscall.ELOOP
		}
		t, err := os.Readlink(next)
		if err != nil {
			return "", nil, err
		}
		links = append(links, next)
		if strings.HasPrefix(t, "/") {
			cur = "/"
		}
		todo = append(strings.Split(t, "/"), todo...)
	}
	return cur, links, nil
}

// fail wraps err with the input's subject and path.
func (in *Input) fail(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var he *Error
	if errors.As(err, &he) {
		return err
	}
	return fmt.Errorf("%s %q: %w", in.subject, in.Name, err)
}

// close closes the opened file.
func (in *Input) close() {
	if in.f != nil {
		in.f.Close()
		in.f = nil
	}
}
