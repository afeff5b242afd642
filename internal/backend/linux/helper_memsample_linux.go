package linux

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

// procSampler measures the memory of every process of the sandbox, in the
// sandbox's /proc. What it cannot measure is an error, never a zero: the
// watch then ends the sandbox and says why.
//
// A process is measured by its statm (resident pages: anonymous, file and
// shared memory, the VmRSS of its status, at a fraction of the cost). A
// process without memory of its own there is a zombie, or a thread group
// whose leader thread has exited (SYS_exit) while other threads run on:
// its statm, and its status's VmRSS, read empty. It is measured through
// its first live thread (task/TID/statm), whose memory is the group's. A
// group whose every task is exiting (a zombie, or PF_EXITING: exit_group
// has begun, its memory is being freed) counts nothing; one with a live
// task none of whose statm shows memory is unmeasurable.
//
// Memory that a descriptor holds without a mapping is not resident in any
// process: the watch counts each kind where it lives (memoryUse), and the
// one it could not, a memory file, the seccomp filter refuses
// (memfd_create and memfd_secret fail with ENOSYS).
type procSampler struct {
	proc int // the /proc directory measured
	page int64
	size int64          // the size field of the last statm read
	seen int            // the processes the last walk (processes) found, the init aside
	held map[string]int // schedstat files held open (helper_memquiet_linux.go)
	buf  []byte
}

// newProcSampler opens the /proc at path.
func newProcSampler(path string) (*procSampler, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &procSampler{proc: fd, page: int64(unix.Getpagesize()), held: map[string]int{}, buf: make([]byte, 16<<10)}, nil
}

func (s *procSampler) close() {
	s.release()
	unix.Close(s.proc)
}

// gone reports whether err says that the process or descriptor read went
// away meanwhile: then it holds nothing.
func gone(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH)
}

// processes returns the resident bytes of every process but the init
// (skip).
func (s *procSampler) processes(skip string) (int64, error) {
	names, err := s.list(".")
	if err != nil {
		return 0, fmt.Errorf("list /proc: %w", err)
	}
	var total int64
	s.seen = 0
	for _, name := range names {
		if name == skip || atoi(name) <= 0 {
			continue
		}
		s.seen++
		n, err := s.resident(name)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// resident returns the resident bytes of process pid.
func (s *procSampler) resident(pid string) (int64, error) {
	n, err := s.statm(pid + "/statm")
	if gone(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("/proc/%s/statm: %w", pid, err)
	}
	if n > 0 {
		return s.withPageTables(pid, n)
	}
	// Nothing of its own: a zombie, a thread group that is exiting
	// (exit_group: every thread drops the memory, which is being freed,
	// and exit cannot be undone), or a leader that exited before its other
	// threads, measured through a live one. Only a group with a live task
	// none of whose statm can be read is unmeasurable.
	tids, err := s.list(pid + "/task")
	if gone(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("/proc/%s/task: %w", pid, err)
	}
	live := 0
	for _, tid := range tids {
		if atoi(tid) <= 0 {
			continue
		}
		// Any task that still shows the memory measures it, exiting
		// or not (a thread waiting for a core dump holds it).
		n, err := s.statm(pid + "/task/" + tid + "/statm")
		if gone(err) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("/proc/%s/task/%s/statm: %w", pid, tid, err)
		}
		if n > 0 {
			return s.withPageTables(pid+"/task/"+tid, n)
		}
		exiting, err := s.exiting(pid + "/task/" + tid + "/stat")
		if gone(err) || (err == nil && exiting) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("/proc/%s/task/%s/stat: %w", pid, tid, err)
		}
		live++
	}
	if live > 0 {
		return 0, fmt.Errorf("process %s: %d of its threads run, and none shows the process's memory", pid, live)
	}
	return 0, nil // a zombie, or every thread exiting
}

// pfExiting is PF_EXITING, the task flag set when a thread starts to exit,
// before it drops its memory.
const pfExiting = 0x4

// exiting reports whether the task whose stat file is at path is exiting:
// a zombie (Z), dead (X or x), or PF_EXITING in its flags.
func (s *procSampler) exiting(path string) (bool, error) {
	fd, err := unix.Openat(s.proc, path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, err
	}
	defer unix.Close(fd)
	n, err := readRetry(fd, s.buf[:1024])
	if err != nil {
		return false, err
	}
	state, flags, ok := parseStatStateFlags(s.buf[:n])
	if !ok {
		return false, fmt.Errorf("unexpected contents %q", s.buf[:min(n, 64)])
	}
	return state == 'Z' || state == 'X' || state == 'x' || flags&pfExiting != 0, nil
}

// parseStatStateFlags returns the state (field 3) and flags (field 9) of
// a /proc stat file: "pid (comm) S ppid pgrp session tty_nr tpgid flags
// ...". The comm is the process's own choice and may hold spaces and
// parentheses: the fields are counted after the last ')'.
func parseStatStateFlags(b []byte) (state byte, flags uint64, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 7 || len(f[0]) != 1 {
		return 0, 0, false
	}
	flags, err := strconv.ParseUint(string(f[6]), 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], flags, true
}

// pageTableFloor is the most page-table memory that is not read: a
// process whose address space (statm's size) could need more page tables
// than this, one 8-byte entry per page, has its VmPTE read and counted.
// Below it, the page tables are at most 16 MiB a process (a process
// count is bounded), and reading every process's status would cost the
// watch several times more.
const pageTableFloor = 16 << 20

// withPageTables returns the resident bytes of the process whose statm is
// at path/statm, resident pages, and its page tables if its address
// space is large enough for them to matter (pageTableFloor): a large
// mapping read one byte per 2 MiB holds page tables, not resident pages.
func (s *procSampler) withPageTables(path string, pages int64) (int64, error) {
	rss := pages * s.page
	if s.size*8 <= pageTableFloor {
		return rss, nil
	}
	pte, err := s.vmPTE(path + "/status")
	if gone(err) {
		return rss, nil
	}
	if err != nil {
		return 0, fmt.Errorf("/proc/%s/status: %w", path, err)
	}
	return rss + pte, nil
}

// vmPTE returns the page-table bytes (VmPTE) in the status file at path;
// a status without it (the memory already dropped) counts 0.
func (s *procSampler) vmPTE(path string) (int64, error) {
	fd, err := unix.Openat(s.proc, path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	n, err := readFull(fd, s.buf)
	if err != nil {
		return 0, err
	}
	kb := statusKB(s.buf[:n], "VmPTE:")
	if kb < 0 || kb > 1<<40 {
		return 0, fmt.Errorf("VmPTE %d kB", kb)
	}
	return kb << 10, nil
}

// readFull reads fd until b is full or the end.
func readFull(fd int, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := readRetry(fd, b[n:])
		if err != nil {
			return n, err
		}
		if m <= 0 {
			break
		}
		n += m
	}
	return n, nil
}

// statm returns the resident pages in the statm file at path, and keeps
// its size (the address space, in pages) in s.size.
func (s *procSampler) statm(path string) (int64, error) {
	fd, err := unix.Openat(s.proc, path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	n, err := readRetry(fd, s.buf[:256])
	if err != nil {
		return 0, err
	}
	size, pages, ok := parseStatm(s.buf[:n])
	s.size = size
	if !ok {
		return 0, fmt.Errorf("unexpected contents %q", s.buf[:min(n, 64)])
	}
	return pages, nil
}

func readRetry(fd int, b []byte) (int, error) {
	for {
		n, err := unix.Read(fd, b)
		if err == unix.EINTR {
			continue
		}
		return n, err
	}
}

// parseStatm returns the first two fields of a statm file ("size
// resident shared text lib data dt", in pages).
func parseStatm(b []byte) (size, resident int64, ok bool) {
	i := 0
	field := func() (int64, bool) {
		for i < len(b) && b[i] == ' ' {
			i++
		}
		start := i
		var v int64
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			if v > (1<<62)/10 {
				return 0, false
			}
			v = v*10 + int64(b[i]-'0')
			i++
		}
		return v, i > start
	}
	if size, ok = field(); !ok {
		return 0, 0, false
	}
	if resident, ok = field(); !ok {
		return 0, 0, false
	}
	return size, resident, true
}

// list returns the names in directory path of the /proc.
func (s *procSampler) list(path string) ([]string, error) {
	fd, err := unix.Openat(s.proc, path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var names []string
	for {
		n, err := unix.Getdents(fd, s.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(s.buf[:n], -1, names)
	}
}
