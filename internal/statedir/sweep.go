package statedir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// A process killed before Close (SIGKILL, a crash, a power cut) leaves its
// state directory and automatic working directory behind. New sweeps them
// from the directory it makes its own state directory in, once per process
// and directory. It removes only what it can prove is moat's and dead, by
// more than a name: a directory named moat-ID-state-*, not a link, mode 0700, owned by
// this user, holding an owner marker (not a link, this user's, well formed,
// naming the same ID) whose process is gone. A process is gone when the
// machine rebooted since (another boot ID), or, in this PID namespace, when
// its PID is free, a zombie, or a different process (another start time,
// /proc/PID/stat's field 22). An owner in another PID namespace is never
// judged dead. With a stale state directory go the automatic working
// directories of the same ID (moat-ID-*: directories owned by this user,
// not links); a supplied working directory is never touched.

// ownerMagic opens every owner marker.
const ownerMagic = "moat-state 1"

// maxOwnerSize bounds an owner marker.
const maxOwnerSize = 4096

// owner is what an owner marker records.
type owner struct {
	ID    string // the sandbox's ID, as in the directory's name
	Pid   int
	Start uint64 // the process's start time, in clock ticks since boot
	PidNS string // the process's PID namespace, as /proc/self/ns/pid reads
	Boot  string // the kernel's boot ID
	Token string // random, so no two markers are alike
}

// procView is what the sweeper asks of the host about processes.
type procView interface {
	// self returns this process's PID namespace and the boot ID; ok is
	// false where they cannot be known (then nothing is swept).
	self() (pidNS, boot string, ok bool)
	// stat returns the start time and state letter of pid; an error
	// matching fs.ErrNotExist when there is no such process.
	stat(pid int) (start uint64, state byte, err error)
}

// format returns the marker's text.
func (o owner) format() string {
	return fmt.Sprintf("%s\nid %s\npid %d\nstart %d\npidns %s\nboot %s\ntoken %s\n",
		ownerMagic, o.ID, o.Pid, o.Start, o.PidNS, o.Boot, o.Token)
}

// parseOwner parses an owner marker.
func parseOwner(data []byte) (owner, error) {
	var o owner
	if len(data) > maxOwnerSize {
		return o, errors.New("owner marker too large")
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) == 0 || lines[0] != ownerMagic {
		return o, errors.New("not an owner marker")
	}
	seen := map[string]bool{}
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, " ")
		if !ok || seen[k] || v == "" || strings.ContainsAny(v, " \t\r\x00") {
			return o, fmt.Errorf("owner marker: bad line %q", l)
		}
		seen[k] = true
		var err error
		switch k {
		case "id":
			if !isHex(v, 12) {
				err = errors.New("bad id")
			}
			o.ID = v
		case "pid":
			o.Pid, err = strconv.Atoi(v)
			if err == nil && o.Pid <= 0 {
				err = errors.New("bad pid")
			}
		case "start":
			o.Start, err = strconv.ParseUint(v, 10, 64)
		case "pidns":
			o.PidNS = v
		case "boot":
			o.Boot = v
		case "token":
			if !isHex(v, 32) {
				err = errors.New("bad token")
			}
			o.Token = v
		default:
			err = errors.New("unknown key")
		}
		if err != nil {
			return owner{}, fmt.Errorf("owner marker: %q: %v", l, err)
		}
	}
	for _, k := range []string{"id", "pid", "start", "pidns", "boot", "token"} {
		if !seen[k] {
			return owner{}, fmt.Errorf("owner marker: no %s", k)
		}
	}
	return o, nil
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// parseProcStat returns the state letter and start time (field 22) of a
// /proc/PID/stat line, whose second field, the command name in
// parentheses, may itself hold spaces and parentheses.
func parseProcStat(data []byte) (start uint64, state byte, err error) {
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, errors.New("stat: no command name")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); field 22 is f[19].
	if len(f) < 20 || len(f[0]) != 1 {
		return 0, 0, errors.New("stat: too few fields")
	}
	start, err = strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("stat: start time: %v", err)
	}
	return start, f[0][0], nil
}

// ownerDead reports whether the process that wrote o is certainly gone.
// Anything uncertain counts as alive.
func ownerDead(o owner, v procView) bool {
	ns, boot, ok := v.self()
	if !ok || o.Boot == "" || o.PidNS == "" || o.Start == 0 {
		return false
	}
	if o.Boot != boot {
		return true // rebooted since: every process of then is gone
	}
	if o.PidNS != ns {
		return false // its PIDs mean nothing here
	}
	start, state, err := v.stat(o.Pid)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true
	case err != nil:
		return false
	case state == 'Z' || state == 'X':
		return true // exited, not yet reaped
	}
	return start != o.Start // the PID was reused
}

// writeOwner writes dir's owner marker for the sandbox id, atomically.
func writeOwner(dir, id string) error {
	o := owner{ID: id, Pid: os.Getpid(), Token: randomToken()}
	v := hostProcs{}
	if ns, boot, ok := v.self(); ok {
		o.PidNS, o.Boot = ns, boot
		if start, _, err := v.stat(o.Pid); err == nil {
			o.Start = start
		}
	}
	// Unknown values are written as "-": such a marker is never judged dead.
	if o.PidNS == "" {
		o.PidNS, o.Boot = "-", "-"
	}
	tmp := filepath.Join(dir, ownerFileName+".new")
	if err := os.WriteFile(tmp, []byte(o.format()), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, ownerFileName))
}

// stateDirID returns the sandbox ID of a state directory's name.
func stateDirID(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "moat-")
	if !ok || len(rest) < 12+len("-state-") {
		return "", false
	}
	id := rest[:12]
	if !isHex(id, 12) || !strings.HasPrefix(rest[12:], "-state-") {
		return "", false
	}
	return id, true
}

// ownDir reports whether p is a directory (not a link) owned by this
// user, and, with perm0700, of mode 0700.
func ownDir(p string, perm0700 bool) bool {
	fi, err := os.Lstat(p)
	if err != nil || !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 {
		return false
	}
	if perm0700 && fi.Mode().Perm() != 0o700 {
		return false
	}
	uid, ok := FileOwner(fi)
	return ok && uid == os.Getuid()
}

// readOwner reads and parses the owner marker in dir.
func readOwner(dir string) (owner, error) {
	p := filepath.Join(dir, ownerFileName)
	fi, err := os.Lstat(p)
	if err != nil {
		return owner{}, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxOwnerSize {
		return owner{}, errors.New("owner marker is not a small regular file")
	}
	if uid, ok := FileOwner(fi); !ok || uid != os.Getuid() {
		return owner{}, errors.New("owner marker belongs to another user")
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return owner{}, err
	}
	return parseOwner(data)
}

// sweepStale removes, from base, the state directories whose owner is
// dead and the automatic working directories of the same sandboxes. It
// returns what it removed.
func sweepStale(base string, v procView) []string {
	entries, err := os.ReadDir(base)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		id, ok := stateDirID(e.Name())
		if !ok {
			continue
		}
		p := filepath.Join(base, e.Name())
		if !ownDir(p, true) {
			continue
		}
		o, err := readOwner(p)
		if err != nil || o.ID != id || !ownerDead(o, v) {
			continue
		}
		for _, w := range entries {
			name := w.Name()
			if !strings.HasPrefix(name, "moat-"+id+"-") || strings.HasPrefix(name, "moat-"+id+"-state-") {
				continue
			}
			if wp := filepath.Join(base, name); ownDir(wp, false) && RemoveAll(wp) == nil {
				removed = append(removed, wp)
			}
		}
		if RemoveAll(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed
}

// swept holds the bases this process has swept.
var swept sync.Map

// sweepStaleOnce sweeps base the first time a process creates a sandbox
// there (TMPDIR, or where it lies inside a working directory, /tmp).
func sweepStaleOnce(base string) {
	if _, done := swept.LoadOrStore(base, true); !done {
		sweepStale(base, hostProcs{})
	}
}
