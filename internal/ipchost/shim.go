// Package ipchost wires typed IPC (package ipc) into a sandbox: the host
// directory with the socket and the shims, the server behind the socket,
// the shims themselves, and the sweep of directories a crash left.
package ipchost

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/ipc"
)

// ipcShimEnv is the marker a shim sets to run this binary as an IPC
// client: its value is the command's name. Like the helper's marker
// (internal/reexec), it is read in an init function, before main, so
// every program that imports moat (the moat command, an embedder's,
// a test binary) serves as its own sandbox's client.
const ipcShimEnv = "_MOAT_IPC_COMMAND"

func init() {
	if name := os.Getenv(ipcShimEnv); name != "" {
		os.Exit(ipc.Main(name, os.Args[1:]))
	}
}

// writeShims creates dir (0700) with one shim per command: a script that
// runs bin, with the marker naming the command and the caller's
// arguments and streams untouched. Names are the router's, already
// checked to be plain file names. The scripts are 0500 and the directory
// is granted read+execute only: the sandbox can neither change nor add
// one.
func writeShims(dir, bin string, cmds []ipc.CommandInfo) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("ipc: shim directory: %w", err)
	}
	for _, c := range cmds {
		p := filepath.Join(dir, c.Name)
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o500)
		if err != nil {
			return fmt.Errorf("ipc: shim %q: %w", c.Name, paths.Bare(err))
		}
		_, err = f.WriteString(shimScript(c.Name, bin))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("ipc: shim %q: %w", c.Name, err)
		}
	}
	return nil
}

// shimScript is the shim of command name.
func shimScript(name, bin string) string {
	return "#!/bin/sh\n" +
		"# moat IPC shim: runs the host program as the client of command " + name + "\n" +
		ipcShimEnv + "=" + shellQuote(name) + "\n" +
		"export " + ipcShimEnv + "\n" +
		"exec " + shellQuote(bin) + " \"$@\"\n"
}

// shellQuote quotes s for sh, in single quotes.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
