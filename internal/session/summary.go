package session

import (
	"strconv"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/size"
	"github.com/moat-sandbox/moat/policy"
)

// freshWorkDir names a fresh working directory in a policy's summary,
// before a session has one.
const freshWorkDir = "(a fresh working directory)"

// summarize says what r allows, from its settings only; workDir is the
// session's working directory, or "" for a policy's listing.
func summarize(r policy.Result, workDir string) Summary {
	s := Summary{
		Network:   networkWords(r.Network.Mode),
		Domains:   []string{},
		Writable:  []string{},
		Readable:  []string{},
		Build:     r.Config.Build,
		Isolation: r.Config.Isolation.String(),
		Limits:    limitWords(r.Config.Limits),
	}
	if s.Network == "allow-list" {
		s.Domains = append(s.Domains, r.Network.AllowDomains...)
	}
	switch {
	case workDir != "":
		s.Writable = append(s.Writable, workDir)
	case r.WorkDir != "":
		s.Writable = append(s.Writable, r.WorkDir)
	default:
		s.Writable = append(s.Writable, freshWorkDir)
	}
	for _, g := range r.Grants {
		if g.Access&moat.WRITE != 0 {
			s.Writable = append(s.Writable, g.Path)
		} else {
			s.Readable = append(s.Readable, g.Path)
		}
	}
	return s
}

// networkWords is a network mode as Summary spells it.
func networkWords(mode string) string {
	switch mode {
	case "", policy.NetworkDeny:
		return "none"
	case policy.NetworkAllowList:
		return "allow-list"
	case policy.NetworkAllowAll:
		return "all"
	case policy.NetworkHost:
		return "host"
	}
	return "none"
}

// limitWords spells each limit: its value, "default ..." for moat's
// default, or "none".
func limitWords(l moat.Limits) map[string]string {
	bytes := func(v int64, def string) string {
		switch {
		case v == 0:
			return def
		case v < 0:
			return "none"
		}
		return size.Human(v)
	}
	count := func(v int64, def string) string {
		switch {
		case v == 0:
			return def
		case v < 0:
			return "none"
		}
		return strconv.FormatInt(v, 10)
	}
	out := map[string]string{
		"memory":     bytes(l.MemoryBytes, "half the host's memory"),
		"processes":  count(l.Processes, strconv.Itoa(moat.DefaultProcesses)),
		"disk":       bytes(l.DiskBytes, "half the free disk space"),
		"file_size":  bytes(l.FileSizeBytes, size.Human(moat.DefaultFileSizeBytes)),
		"cpu_time":   "none",
		"timeout":    "none",
		"open_files": count(l.OpenFiles, strconv.Itoa(moat.DefaultOpenFiles)),
	}
	if l.CPUSeconds > 0 {
		out["cpu_time"] = strconv.FormatInt(l.CPUSeconds, 10) + " s"
	}
	if l.Timeout > 0 {
		out["timeout"] = l.Timeout.String()
	}
	return out
}
