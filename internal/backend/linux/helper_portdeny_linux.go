package linux

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// portDenyAccess is what the port deny layer handles: TCP connect, and
// TCP bind, so that a command can neither reach a listed port nor take it
// on another address ([::1], 127.0.0.2, [::] v6-only) beside the server
// that holds it on one, where a client would then meet the sandbox.
const portDenyAccess = unix.LANDLOCK_ACCESS_NET_CONNECT_TCP | unix.LANDLOCK_ACCESS_NET_BIND_TCP

// buildPortDeny creates the Landlock ruleset that denies TCP connect and
// bind to s.DenyTCPPorts and allows both on every other port: Landlock
// has no deny rule and no port range, so it is one rule for each of the
// other 65,534 or so ports (port 0, bind's ephemeral port, included), each
// rule carrying both rights, so bind adds no rule. The zygote builds it
// once and enforces it on each command's thread as a layer of its own,
// after the filesystem ruleset (which may be rebuilt for a command, see
// forkCommand): the layers intersect, and this one handles TCP connect and
// bind only. nil when no port is denied.
func buildPortDeny(s *helperSpec) (*ruleset, error) {
	if len(s.DenyTCPPorts) == 0 {
		return nil, nil
	}
	if s.LandlockABI < 4 {
		return nil, fmt.Errorf("deny TCP connect and bind to %s: needs Landlock ABI 4, the kernel has %d", portList(s.DenyTCPPorts), s.LandlockABI)
	}
	return buildPortRules(s.DenyTCPPorts, portDenyAccess)
}

// buildPortRules creates a Landlock ruleset that handles the network
// rights access and allows them on every port but denied: one rule for
// each other port, carrying all of access.
func buildPortRules(denied []uint16, access uint64) (*ruleset, error) {
	var deny [1 << 16]bool
	for _, p := range denied {
		deny[p] = true
	}
	attr := unix.LandlockRulesetAttr{Handled_access_net: access}
	fd, err := landlockCreateRuleset(&attr)
	if err != nil {
		return nil, fmt.Errorf("landlock_create_ruleset for the denied TCP ports: %w", err)
	}
	rs := &ruleset{fd: fd}
	for port := range len(deny) {
		if deny[port] {
			continue
		}
		pa := landlockNetPortAttr{AllowedAccess: access, Port: uint64(port)}
		if err := landlockAddPortRule(fd, &pa); err != nil {
			rs.close()
			return nil, fmt.Errorf("landlock rule for TCP port %d: %w", port, err)
		}
	}
	return rs, nil
}

// Landlock copies every rule of a thread's domain into each domain made
// under it, so enforcing the port deny layer costs each command tens of
// milliseconds (65,534 rules to copy) and a few MiB of kernel memory for
// as long as it runs. Where nothing differs from one command to the next
// (no socket guard, whose filter names each command's program; no mount
// namespace of its own to hide /proc; no terminal, which needs a rule of
// its own) the commands are forked instead from one steady thread that
// took every restriction once: the commands share its domain, as the
// processes of one command share theirs.

// startPortDeny checks that the kernel can deny s.DenyTCPPorts and builds
// the layer on a goroutine of its own; the channel it returns is closed
// once z.portDeny (or z.portErr) is set, and is nil when no port is
// denied.
func (z *zygoteProc) startPortDeny() (chan struct{}, error) {
	s := &z.spec
	if len(s.DenyTCPPorts) == 0 {
		return nil, nil
	}
	if s.LandlockABI < 4 {
		return nil, fmt.Errorf("deny TCP connect and bind to %s: needs Landlock ABI 4, the kernel has %d", portList(s.DenyTCPPorts), s.LandlockABI)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		z.portDeny, z.portErr = buildPortDeny(s)
	}()
	return done, nil
}

// steadyJob is a command for the steady thread, answered on done.
type steadyJob struct {
	cmd   *commandSpec
	files []int
	done  chan reply
}

// startSteady starts the steady thread: it restricts itself as forkCommand
// does a command's thread, seccomp filter included, once, and then forks
// each command it is given. A restriction that fails fails every command.
func (z *zygoteProc) startSteady() chan<- steadyJob {
	jobs := make(chan steadyJob)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread carries the restrictions
		err := z.restrictThread(z.rules)
		if err == nil {
			err = installFilter(z.filter)
		}
		for j := range jobs {
			if err != nil {
				j.done <- reply{Error: err.Error(), Code: 125}
				continue
			}
			t := newTracer(j.cmd.TraceStart)
			t.mark("command received (steady thread)")
			cpath, perr := unix.BytePtrFromString(j.cmd.Path)
			if perr != nil {
				j.done <- reply{Error: fmt.Sprintf("%s: %v", j.cmd.Path, perr), Code: execFailureCode(perr)}
				continue
			}
			j.done <- z.spawn(j.cmd, j.files, cpath, t)
		}
	}()
	return jobs
}

// steadyFits reports whether a command with these descriptors can be
// forked from the steady thread.
func (z *zygoteProc) steadyFits(files []int) bool {
	return z.steady != nil && z.guard == nil && !z.spec.HideProc && len(terminalFDs(files[:3])) == 0
}
