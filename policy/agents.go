package policy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// AgentOptions chooses which agents [DiscoverAgents] looks for. The zero
// value looks for none.
type AgentOptions struct {
	// SSH is the SSH agent: SSH_AUTH_SOCK.
	SSH bool
	// GPG is GnuPG's agent, keyboxd and dirmngr: the socket of
	// GPG_AGENT_INFO (before its first ':'), the S.* sockets of
	// $XDG_RUNTIME_DIR/gnupg, and the sockets gpgconf --list-dirs names.
	GPG bool
	// Age is the age agent: AGE_AUTH_SOCK and GOPASS_AGE_AGENT_SOCK.
	Age bool
}

// Agents is what [DiscoverAgents] found. The zero value exposes nothing.
type Agents struct {
	// Sockets lists the agents' Unix sockets, absolute and existing, in
	// the order found, each once, for [moat.Config.Sockets].
	Sockets []string
	// Env names the host variables that point at them (SSH_AUTH_SOCK,
	// GPG_AGENT_INFO, AGE_AUTH_SOCK, GOPASS_AGE_AGENT_SOCK) and are set on
	// the host, to pass to the command whatever the environment mode.
	Env []string
}

// agentVars are the variables of each agent, which pass to the command
// only when its agent is chosen.
var agentVars = map[string][]string{
	"ssh": {"SSH_AUTH_SOCK"},
	"gpg": {"GPG_AGENT_INFO"},
	"age": {"AGE_AUTH_SOCK", "GOPASS_AGE_AGENT_SOCK"},
}

// isAgentVar reports whether name is one of the agents' variables.
func isAgentVar(name string) bool {
	for _, vs := range agentVars {
		if slices.Contains(vs, name) {
			return true
		}
	}
	return false
}

// gnupgSockets are the socket names GnuPG keeps in its socket directory.
var gnupgSockets = []string{"S.gpg-agent", "S.gpg-agent.extra", "S.gpg-agent.ssh", "S.gpg-agent.browser", "S.keyboxd", "S.dirmngr"}

// gpgconfSocketKeys are the lines of gpgconf --list-dirs that name sockets.
// Its homedir and socketdir are not made readable: the home holds the
// private keys, which the agent, not the sandbox, reads.
var gpgconfSocketKeys = []string{"agent-socket", "agent-ssh-socket", "agent-extra-socket", "agent-browser-socket", "keyboxd-socket", "dirmngr-socket"}

// gpgconfTimeout bounds gpgconf --list-dirs, and gpgconfMaxOutput what is
// read of it.
const (
	gpgconfTimeout   = 10 * time.Second
	gpgconfMaxOutput = 64 << 10
)

// DiscoverAgents finds the sockets of the agents opt chooses, from the
// host environment environ (as os.Environ gives it). Only a socket named
// by an absolute path that exists as a Unix socket is used; a relative,
// missing or other path is left out without an error, since an agent that
// is not running is not a mistake of the policy. gpgconf is looked up on
// environ's PATH: missing, it is skipped; present and failing, it is an
// error, since then the agent's sockets are unknown.
func DiscoverAgents(environ []string, opt AgentOptions) (Agents, error) {
	var a Agents
	add := func(p string) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		p = filepath.Clean(p)
		fi, err := os.Stat(p)
		if err != nil || fi.Mode()&fs.ModeSocket == 0 || slices.Contains(a.Sockets, p) {
			return
		}
		a.Sockets = append(a.Sockets, p)
	}
	pass := func(agent string) {
		for _, v := range agentVars[agent] {
			if _, ok := lookupEnviron(environ, v); ok {
				a.Env = append(a.Env, v)
			}
		}
	}
	if opt.SSH {
		v, _ := lookupEnviron(environ, "SSH_AUTH_SOCK")
		add(v)
		pass("ssh")
	}
	if opt.GPG {
		if info, ok := lookupEnviron(environ, "GPG_AGENT_INFO"); ok {
			sock, _, _ := strings.Cut(info, ":")
			add(sock)
		}
		if run, _ := lookupEnviron(environ, "XDG_RUNTIME_DIR"); filepath.IsAbs(run) {
			for _, s := range gnupgSockets {
				add(filepath.Join(run, "gnupg", s))
			}
		}
		socks, err := gpgconfSockets(environ)
		if err != nil {
			return Agents{}, err
		}
		for _, s := range socks {
			add(s)
		}
		pass("gpg")
	}
	if opt.Age {
		for _, v := range agentVars["age"] {
			s, _ := lookupEnviron(environ, v)
			add(s)
		}
		pass("age")
	}
	return a, nil
}

// gpgconfSockets runs gpgconf --list-dirs, found on environ's PATH, and
// returns the sockets it names; none when there is no gpgconf.
func gpgconfSockets(environ []string) ([]string, error) {
	path, _ := lookupEnviron(environ, "PATH")
	bin := findExecutable("gpgconf", path)
	if bin == "" {
		return nil, nil
	}
	// gpgconf runs on the host: refuse one that a sandbox of an earlier
	// run could have put on PATH, unless the user pinned it.
	if err := checkHostProgram(bin, "gpgconf found on PATH"); err != nil {
		return nil, fmt.Errorf("gpgAgent: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), gpgconfTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--list-dirs")
	cmd.Env = gpgconfEnv(environ)
	var out, stderr limitedBuffer
	out.max, stderr.max = gpgconfMaxOutput, 4<<10
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			msg = ": " + strings.Join(strings.Fields(msg), " ")
		}
		return nil, fmt.Errorf("gpgAgent: gpgconf --list-dirs failed: %v%s", err, msg)
	}
	if out.over {
		return nil, fmt.Errorf("gpgAgent: gpgconf --list-dirs: more than %d bytes of output", gpgconfMaxOutput)
	}
	return parseGpgconfDirs(out.String()), nil
}

// parseGpgconfDirs returns the socket paths of gpgconf --list-dirs output:
// KEY:VALUE lines, the value percent-escaped (%3a for ':').
func parseGpgconfDirs(out string) []string {
	var socks []string
	for line := range strings.SplitSeq(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimRight(line, "\r"), ":")
		if !ok || !slices.Contains(gpgconfSocketKeys, k) {
			continue
		}
		if p, err := percentUnescape(v); err == nil {
			socks = append(socks, p)
		}
	}
	return socks
}

// percentUnescape decodes %XX escapes, as gpgconf writes them.
func percentUnescape(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", errors.New("truncated escape")
		}
		var c byte
		for _, h := range []byte{s[i+1], s[i+2]} {
			switch {
			case h >= '0' && h <= '9':
				c = c<<4 | (h - '0')
			case h >= 'a' && h <= 'f':
				c = c<<4 | (h - 'a' + 10)
			case h >= 'A' && h <= 'F':
				c = c<<4 | (h - 'A' + 10)
			default:
				return "", errors.New("bad escape")
			}
		}
		b.WriteByte(c)
		i += 2
	}
	return b.String(), nil
}

// findExecutable looks name up in the PATH list path, as a shell would,
// and returns "" if it is not there.
func findExecutable(name, path string) string {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue // never the current directory
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// lookupEnviron returns the value of name in environ (the last entry
// wins, as for the process's own environment).
func lookupEnviron(environ []string, name string) (string, bool) {
	for i := len(environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(environ[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// limitedBuffer keeps the first max bytes written to it and notes more.
type limitedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

// Write keeps what fits and reports the whole write as done, so the
// writer is never blocked.
func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); len(p) > room {
		b.over = true
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}
