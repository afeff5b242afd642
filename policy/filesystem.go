package policy

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/fspattern"
	"github.com/moat-sandbox/moat/internal/hostinput"
	"github.com/moat-sandbox/moat/internal/runjournal"
)

// FilesystemPlan is what a policy's filesystem patterns come to on this
// host: concrete, absolute, clean paths, each list sorted. The zero value
// plans nothing beyond a readable cwd.
type FilesystemPlan struct {
	// Cwd is the working directory, with its links resolved.
	Cwd string
	// CwdWritable says the cwd itself is writable: a broad writable
	// pattern (".", "./", "*", "**", "**/*") or an absolute writable
	// ancestor covers it. False keeps it read-only.
	CwdWritable bool
	// CwdDenied says a deny pattern named the cwd itself ("."), so it is
	// not even readable.
	CwdDenied bool
	// Writable are the paths made writable besides the cwd.
	Writable []string
	// Readable are the paths a negated literal deny restores, read-only,
	// inside a denied directory.
	Readable []string
	// Deny are the denied paths: those that exist (a symbolic link's
	// target), and missing literal paths under a writable directory,
	// which the sandbox must not create.
	Deny []string
	// ReadOnly are the protected control entries (.git, .agents, .pi, the
	// fragment files and every .moat-* and .heimdall-* entry), existing or
	// not, and what a negated writable pattern keeps read-only. For a
	// missing control entry the Linux engine adds no rule and creates
	// nothing: what the run creates there is moved aside at Close (see
	// moat.Config.ReadOnly), so the cwd's top stays writable.
	ReadOnly []string
	// Seal are the readable, non-writable directories in which a deny
	// pattern could match an entry created after the start; such entries
	// are denied.
	Seal []string
	// HardLinkGaps are denied files with other names (hard links) that
	// are not under the cwd, each written "PATH (N more)": those names
	// reach the same content and are not denied. Their names under the
	// cwd are in Deny.
	HardLinkGaps []string
	// LinksOut are symbolic links under the cwd to directories outside
	// it, which an unanchored deny pattern ("**") passes over without
	// following: patterns match inside the cwd.
	LinksOut []string
	// LeftByKilledRun are the entries at the cwd's top that a run killed
	// before Close created, which the next run sets aside: a fragment
	// among them is not read. Nil once swept (a run sweeps first).
	LeftByKilledRun []string
}

// Warnings are what the user should be told of the plan at the start: one
// line per denied file that keeps an undenied name elsewhere.
func (p *FilesystemPlan) Warnings() []string {
	var out []string
	for _, g := range p.HardLinkGaps {
		out = append(out, "moat: warning: denied file "+g+": its other names (hard links) lie outside the cwd or cannot be read, and reach the same content undenied")
	}
	for _, l := range p.LeftByKilledRun {
		out = append(out, "moat: warning: "+l+": left by a run killed before Close, not read as the policy; the next run sets it aside")
	}
	return out
}

// PlanFilesystem compiles the deny and writable patterns of a policy (the
// lines given, then the fragment files .heimdall-deny and .moat-deny,
// .heimdall-write and .moat-write of cwd, never of its parents) and
// materializes them against the host. cwd must be an existing directory;
// home expands ~ (empty makes ~ an error). An invalid pattern reads
// `invalid filesystem pattern "X": ...`, a fragment that cannot be
// read `invalid filesystem fragment PATH: ...`, and host state that
// cannot be told apart from a missing path is an error too: the plan is
// never weakened on it.
func PlanFilesystem(cwd, home string, deny, writable []string) (*FilesystemPlan, error) {
	if !filepath.IsAbs(cwd) {
		return nil, fmt.Errorf("filesystem policy: cwd %q: not absolute", cwd)
	}
	cwd = filepath.Clean(cwd)
	real, err := filepath.EvalSymlinks(cwd)
	if err != nil {
		return nil, fmt.Errorf("filesystem policy: cwd %q: %w", cwd, unwrapPath(err))
	}
	var aliases []string
	if real != cwd {
		aliases = []string{cwd}
	}
	if home != "" {
		home = filepath.Clean(home)
	}
	// A fragment that a sandbox of an earlier run could have written is
	// refused unless pinned (moat trust): without the record of those
	// places none can be told apart, so no state directory fails closed.
	state, err := moat.StateDir()
	if err != nil {
		return nil, fmt.Errorf("filesystem policy: cannot check the fragments of %q against earlier runs: %s", real, err.Error())
	}
	// What a run killed before Close created at the cwd's top is the
	// sandbox's, not the user's: planning without a sweep (explain), it
	// reads as absent, as it will be once the next run sets it aside.
	left := runjournal.Left(real)
	skip := map[string]bool{}
	for _, name := range left {
		skip[name] = true
	}
	res, err := fspattern.Materialize(fspattern.Input{Root: real, RootAliases: aliases, Home: home, Deny: deny, Writable: writable, Inputs: hostinput.Store{Dir: state}, Skip: skip})
	if err != nil {
		return nil, err
	}
	var leftPaths []string
	for _, name := range left {
		leftPaths = append(leftPaths, filepath.Join(real, name))
	}
	return &FilesystemPlan{
		LeftByKilledRun: leftPaths,

		Cwd:         real,
		CwdWritable: res.RootWritable,
		CwdDenied:   res.RootDenied,
		Writable:    res.Writable,
		Readable:    res.Readable,
		Deny:        res.Deny,
		ReadOnly:    res.ReadOnly,
		Seal:        res.Seal,

		HardLinkGaps: res.HardLinkGaps,
		LinksOut:     res.LinksOut,
	}, nil
}

// ApplyFilesystem sweeps what runs killed before Close left (their
// fragments among them), plans the filesystem patterns of a policy
// document ([PlanFilesystem]) and adds the plan to cfg: a grant of the cwd (read,
// or read-write when it is covered), read-write grants of the writable
// targets and read grants of the restored ones, through
// [moat.ResolvePaths], executable too in build mode (cfg.Build, which
// must be set first); the denied paths to cfg.Deny, the protected ones to
// cfg.ReadOnly and the sealed directories to cfg.Seal. cfg.WorkDir should
// not be cwd, which would make all of it writable.
func ApplyFilesystem(cfg *moat.Config, cwd, home string, deny, writable []string) error {
	// What a library caller applies, it runs: fragments a run killed
	// before Close planted in the cwd are swept first, as Document.Exec
	// does (explaining a policy sweeps nothing).
	runjournal.Sweep()
	_, err := applyFilesystem(cfg, cwd, home, deny, writable)
	return err
}

// applyFilesystem is ApplyFilesystem, returning the plan it applied.
func applyFilesystem(cfg *moat.Config, cwd, home string, deny, writable []string) (*FilesystemPlan, error) {
	if cfg == nil {
		return nil, errors.New("filesystem policy: nil config")
	}
	plan, err := PlanFilesystem(cwd, home, deny, writable)
	if err != nil {
		return nil, err
	}
	// In build mode the cwd stands in for the working directory, which
	// build mode makes executable: what the command writes in it (a
	// writable cwd, or a writable target below it) may run, so that
	// `go build -o app . && ./app` works as under moat run --build.
	rw := moat.READ | moat.WRITE
	if cfg.Build {
		rw |= moat.EXEC
	}
	var reqs []moat.PathRequest
	if !plan.CwdDenied {
		a := moat.READ
		if plan.CwdWritable {
			a = rw
		}
		reqs = append(reqs, moat.PathRequest{Path: plan.Cwd, Access: a})
	}
	// A pattern never opens a protected path (filesystem_protected.go).
	protected := protectedPaths(home)
	literal := literalTargets(plan.Cwd, home, append(append([]string(nil), writable...), deny...))
	plan.Writable = withoutProtected(plan.Writable, protected, literal)
	plan.Readable = withoutProtected(plan.Readable, protected, literal)
	for _, p := range plan.Writable {
		reqs = append(reqs, moat.PathRequest{Path: p, Access: rw})
	}
	for _, p := range plan.Readable {
		reqs = append(reqs, moat.PathRequest{Path: p, Access: moat.READ})
	}
	_, grants, err := moat.ResolvePaths("", reqs)
	if err != nil {
		return nil, err
	}
	// A grant of a path wins over a deny of the same path; a denied link
	// whose target is granted must not lose its deny that way.
	granted := map[string]bool{}
	for _, g := range grants {
		granted[g.Path] = true
	}
	for _, d := range plan.Deny {
		if granted[d] {
			return nil, fmt.Errorf("filesystem policy: %s is both denied (through a symbolic link) and granted", strconv.Quote(d))
		}
	}
	cfg.Grants = append(cfg.Grants, grants...)
	cfg.Deny = append(cfg.Deny, plan.Deny...)
	cfg.ReadOnly = append(cfg.ReadOnly, plan.ReadOnly...)
	cfg.Seal = append(cfg.Seal, plan.Seal...)
	return plan, nil
}
