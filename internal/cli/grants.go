package cli

import (
	"errors"
	"strings"

	"github.com/moat-sandbox/moat"
)

// grantList collects --grant PATH=MODE and its shorthands, in order.
type grantList []moat.PathRequest

// Set parses PATH=MODE; the last "=" separates them, so a path may hold "=".
func (g *grantList) Set(s string) error {
	i := strings.LastIndexByte(s, '=')
	if i <= 0 {
		return errors.New("want PATH=MODE, MODE being r, rw, rx or rwx")
	}
	var a moat.Access
	err := a.UnmarshalText([]byte(s[i+1:]))
	if err != nil {
		return errors.New(err.Error())
	}
	*g = append(*g, moat.PathRequest{Path: s[:i], Access: a})
	return nil
}

func (g *grantList) String() string {
	parts := make([]string, len(*g))
	for i, r := range *g {
		parts[i] = r.Path + "=" + r.Access.String()
	}
	return strings.Join(parts, ",")
}

func (g *grantList) Type() string { return "PATH=MODE" }

// grantShorthand is --readable, --writable or --executable: a PATH with a
// fixed mode.
type grantShorthand struct {
	list   *grantList
	access moat.Access
}

func (s grantShorthand) Set(path string) error {
	if path == "" {
		return errors.New("empty path")
	}
	*s.list = append(*s.list, moat.PathRequest{Path: path, Access: s.access})
	return nil
}

func (s grantShorthand) String() string { return "" }
func (s grantShorthand) Type() string   { return "PATH" }
