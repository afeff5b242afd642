package venv

import (
	"context"
	"io"
)

// Job is one install, which an [Installer] runs in a sandbox of its own,
// never on the host. The zero value installs nothing.
type Job struct {
	// Venv is the venv being built: the one place the install may write
	// (and execute). Absolute.
	Venv string
	// Cache is the install's own build cache (pip's or uv's), writable,
	// outside the venv and never shown to the code's sandbox. Absolute.
	Cache string
	// Interpreter is the real path of the trusted base interpreter the
	// venv's bin/python leads to; its installation must be readable and
	// executable.
	Interpreter string
	// Read are host paths the install may read: local --find-links
	// directories and a file: index. Nil means none.
	Read []string
	// Exec are host files the install runs besides the interpreter (uv).
	// Nil means none.
	Exec []string
	// Hosts are the host names the install may connect to: the package
	// index and --find-links URLs. Nil means no network at all.
	Hosts []string
	// Env are NAME=VALUE entries the steps get besides the sandbox's own
	// environment. Nil means none.
	Env []string
	// Steps are the command lines to run, in order, in the sandbox; the
	// first that fails ends the job.
	Steps [][]string
	// Stdout and Stderr receive what the steps print. Nil discards it.
	Stdout, Stderr io.Writer
}

// Installer runs a [Job] in a sandbox of its own whose only writable
// places are job.Venv and job.Cache (and its private temporary
// directories), whose network reaches only job.Hosts, and returns when
// that sandbox has exited: an error when it could not be made or a step
// failed. moat's VenvManager supplies one built on moat's own sandbox; a
// nil Installer makes [Create] refuse to install.
type Installer func(ctx context.Context, job Job) error

// DefaultIndexHosts are the hosts pip's and uv's default index, PyPI,
// serves from.
var DefaultIndexHosts = []string{"pypi.org", "files.pythonhosted.org"}
