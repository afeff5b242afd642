package mcpserver

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/moat-sandbox/moat/internal/runjournal"
)

// NewToken is 32 random bytes, hex.
func NewToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// TokenDir is the 0700 directory the token file goes in: stateRoot/mcp
// (empty stateRoot means moat's state directory), which every sandbox's
// view hides and no grant may reach; never the runtime directory, which a
// policy may grant readable. It is made if missing and refused unless it
// is a directory of this user's that nobody else may enter.
func TokenDir(stateRoot string) (string, error) {
	if stateRoot == "" {
		root, err := runjournal.StateRoot()
		if err != nil {
			return "", fmt.Errorf("token directory: %w", err)
		}
		stateRoot = root
	}
	dir := filepath.Join(stateRoot, "mcp")
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("token directory %q: %w", dir, err)
	}
	if err := privateDir(dir); err != nil {
		return "", fmt.Errorf("token directory %q: %w", dir, err)
	}
	return dir, nil
}

// WriteToken writes token, mode 0600, to a file named after the port and
// this process in dir, replacing none: a file already there is an error.
func WriteToken(dir string, port int, token string) (string, error) {
	path := filepath.Join(dir, "mcp-"+strconv.Itoa(port)+"-"+strconv.Itoa(os.Getpid())+".token")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		f.Close()
		os.Remove(path)
		return "", fmt.Errorf("token file: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return "", fmt.Errorf("token file: %w", err)
	}
	return path, nil
}

// SweepTokens removes the token files in dir that servers killed before
// they could remove their own (kill -9) left: those whose process is gone.
func SweepTokens(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		var port, pid int
		if n, _ := fmt.Sscanf(e.Name(), "mcp-%d-%d.token", &port, &pid); n != 2 || !e.Type().IsRegular() {
			continue
		}
		if e.Name() != "mcp-"+strconv.Itoa(port)+"-"+strconv.Itoa(pid)+".token" || processAlive(pid) {
			continue
		}
		os.Remove(filepath.Join(dir, e.Name()))
	}
}
