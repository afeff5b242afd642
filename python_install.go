package moat

import (
	"context"
	"path/filepath"

	"github.com/moat-sandbox/moat/internal/hostview"
	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/internal/venv"
)

// installVenv is the [venv.Installer] of [VenvManager]: it runs job's
// steps in a sandbox of their own, never on the host. The sandbox is at
// the strict level (system files only) with a fresh private working
// directory and home; besides its private temporary directories, its only
// writable places are the venv (read, write and execute, as pip's
// console scripts and compiled modules need) and the install's own build
// cache (read and write); the --find-links directories and a file: index
// are read-only; the base interpreter's installation, when it lies outside
// the system directories, is read and execute. Its network reaches only
// job.Hosts through moat's proxy, and nothing at all when there are none.
func installVenv(ctx context.Context, job venv.Job) error {
	grants := []Grant{
		{Path: job.Venv, Access: READ | WRITE | EXEC},
		{Path: job.Cache, Access: READ | WRITE},
	}
	for _, p := range job.Read {
		grants = append(grants, Grant{Path: p, Access: READ})
	}
	for _, p := range job.Exec {
		grants = append(grants, Grant{Path: p, Access: READ | EXEC})
	}
	if pre := filepath.Dir(filepath.Dir(job.Interpreter)); job.Interpreter != "" && pre != "/" && !paths.UnderAny(pre, hostview.SystemPathRoots) && isPythonPrefix(pre) {
		grants = append(grants, Grant{Path: pre, Access: READ | EXEC})
	}
	var network NetworkPolicy = DenyAll()
	if len(job.Hosts) > 0 {
		allow, err := AllowList(job.Hosts...)
		if err != nil {
			return errorf("venv install: the index hosts: %v", err)
		}
		network = allow
	}
	sb, err := New(Config{
		Isolation: IsolationStrict,
		Grants:    grants,
		Network:   network,
		Env:       Env{Set: job.Env},
	})
	if err != nil {
		return err
	}
	for _, argv := range job.Steps {
		c := sb.CommandContext(ctx, argv[0], argv[1:]...)
		c.Stdout, c.Stderr = job.Stdout, job.Stderr
		if err = c.Run(); err != nil {
			break
		}
	}
	if cerr := sb.Close(); err == nil {
		err = cerr
	}
	return err
}
