package policy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// maxFileSize bounds what Load reads. A config file is a few lines; the
// bound also keeps the decoder, whose time grows with the square of the
// keys in a table, to about a second.
const maxFileSize = 256 << 10

// File is a checked config file. Its zero value sets nothing.
type File struct {
	// Name is the file's name as given to [Load] or [Parse].
	Name string
	// Layer is the file's settings, to pass to [Merge]. Its paths (grants,
	// working directory, audit log) are absolute: relative ones were
	// taken relative to the file's directory, and a leading ~/ stands for
	// $HOME. Its Source names the file and the line of each key.
	Layer
}

// Load reads and checks the config file at path. Every mistake, from an
// unreadable file to an unknown key or a bad value, is an [*Error] that
// names the file and, where there is one, the line.
func Load(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{File: path, Err: unwrapPath(err)}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, &Error{File: path, Err: unwrapPath(err)}
	}
	if len(data) > maxFileSize {
		return nil, &Error{File: path, Err: errors.New("larger than 256 KiB")}
	}
	return Parse(path, data)
}

// Parse checks the TOML document data as the config file name, which
// places its relative paths (see [File.Layer]) and names it in errors.
// Every mistake is an [*Error].
func Parse(name string, data []byte) (*File, error) {
	raw, err := decode(name, data)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(filepath.Dir(name))
	if err != nil {
		return nil, &Error{File: name, Err: err}
	}
	c := &checker{name: name, lines: indexLines(data), dir: dir, home: os.Getenv("HOME")}
	layer, err := c.layer(raw)
	if err != nil {
		return nil, err
	}
	layer.Source = fileSource{name: name, lines: c.lines}
	return &File{Name: name, Layer: layer}, nil
}

// unwrapPath drops the operation and path of a *fs.PathError, which the
// message already names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// fileSource names the keys of a config file and their lines.
type fileSource struct {
	name  string
	lines lineIndex
}

// Key returns key as the file spells it.
func (s fileSource) Key(key string) string { return key }

// At returns `config "NAME": line N`, without the line if unknown.
func (s fileSource) At(key string) string {
	at := "config " + strconv.Quote(s.name)
	if n := s.lines.line(strings.Split(key, ".")...); n > 0 {
		at += fmt.Sprintf(": line %d", n)
	}
	return at
}
