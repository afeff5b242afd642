package darwin

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"strconv"
	"strings"
)

// HelperEnv is the environment variable whose value selects the helper
// role: "run:N", where N is the descriptor of the pipe carrying the
// command (N+1 is the status pipe, N+2 the lifeline), or "watch:PGID" and
// "watch2:PGID" for the watcher's two steps.
const HelperEnv = "_MOAT_DARWIN_HELPER"

// helperArg is the helper's argv[1], so that ps shows what it is.
const helperArg = "moat-sandbox-helper"

// helperSpec is what the helper is told, gob-encoded on its command pipe
// (gob keeps strings' bytes as they are, where JSON would replace invalid
// UTF-8 in an argument or the environment). The zero value runs nothing.
type helperSpec struct {
	Path string
	Args []string
	Env  []string
	// Keep is how many descriptors from 3 up the command inherits
	// (ExtraFiles); the helper's own pipes follow them.
	Keep    int
	Rlimits []rlimit
	// Nice is how many steps to lower the CPU priority by.
	Nice int
	// IOPolicy is the iopolicysys disk policy to set; 0 leaves it.
	IOPolicy int
	// Watch starts the watcher that kills the process group when moat
	// goes away.
	Watch bool
}

// rlimit is one resource limit; Hard zero means Soft.
type rlimit struct {
	Resource int
	Soft     uint64
	Hard     uint64
}

func encodeSpec(s helperSpec) ([]byte, error) {
	var b bytes.Buffer
	err := gob.NewEncoder(&b).Encode(s)
	return b.Bytes(), err
}

func decodeSpec(b []byte) (helperSpec, error) {
	var s helperSpec
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&s); err != nil {
		return s, fmt.Errorf("helper spec: %w", err)
	}
	if s.Path == "" || len(s.Args) == 0 {
		return s, fmt.Errorf("helper spec: no command")
	}
	if s.Keep < 0 || s.Keep > 1<<16 {
		return s, fmt.Errorf("helper spec: %d descriptors to keep", s.Keep)
	}
	return s, nil
}

// The status pipe carries readyByte once the helper runs inside the
// sandbox with its limits set, then, if executing the command fails, a
// failure "CODE MESSAGE"; the pipe closes when the command executes.
const readyByte = 'R'

// status is what the helper reported on its status pipe.
type status struct {
	// Ready says the helper ran inside the sandbox.
	Ready bool
	// Code and Msg are a failure to set up or execute the command; Code
	// zero means none.
	Code int
	Msg  string
}

// parseStatus reads what the status pipe carried until it closed.
func parseStatus(b []byte) status {
	var st status
	if len(b) > 0 && b[0] == readyByte {
		st.Ready = true
		b = b[1:]
	}
	if len(b) == 0 {
		return st
	}
	code, msg, _ := strings.Cut(string(b), " ")
	n, err := strconv.Atoi(code)
	if err != nil || n < 1 || n > 255 {
		return status{Ready: st.Ready, Code: 125, Msg: "sandbox helper: unreadable status " + strconv.Quote(string(b))}
	}
	st.Code, st.Msg = n, msg
	return st
}

// formatStatus is a failure as the helper writes it.
func formatStatus(code int, msg string) []byte {
	return []byte(strconv.Itoa(code) + " " + msg)
}

// The disk I/O policies of iopolicysys (sys/resource.h).
const (
	iopolThrottle = 3 // IOPOL_THROTTLE: background, yields to everything
	iopolUtility  = 4 // IOPOL_UTILITY: below normal
)

// ioPolicy is the disk policy for spec's IOPriority: 1 (best-effort,
// lowest) is utility, 2 (idle) is throttle; 0 leaves it.
func ioPolicy(prio int) int {
	switch prio {
	case 1:
		return iopolUtility
	case 2:
		return iopolThrottle
	}
	return 0
}

// The rlimit resources as macOS numbers them (sys/resource.h), written
// here so the plan is built and tested on any OS.
const (
	rlimitCPU    = 0
	rlimitFSIZE  = 1
	rlimitDATA   = 2
	rlimitCORE   = 4
	rlimitNPROC  = 7
	rlimitNOFILE = 8
)

// rlimitPlan is the rlimits for the policy's limits. Memory is left out:
// macOS enforces neither RLIMIT_AS nor RLIMIT_DATA on mapped memory (see
// assess). userProcs is how many processes the user already runs, which
// RLIMIT_NPROC counts too.
func rlimitPlan(cpu, fsize, procs, files int64, userProcs int) []rlimit {
	out := []rlimit{{Resource: rlimitCORE, Soft: 0}}
	if cpu > 0 {
		// SIGXCPU at the limit; SIGKILL a second later.
		out = append(out, rlimit{Resource: rlimitCPU, Soft: uint64(cpu), Hard: uint64(cpu) + 1})
	}
	if fsize > 0 {
		out = append(out, rlimit{Resource: rlimitFSIZE, Soft: uint64(fsize)})
	}
	if files > 0 {
		out = append(out, rlimit{Resource: rlimitNOFILE, Soft: uint64(files)})
	}
	if procs > 0 {
		out = append(out, rlimit{Resource: rlimitNPROC, Soft: uint64(procs) + uint64(userProcs)})
	}
	return out
}
