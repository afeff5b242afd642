package aclplan

import (
	"fmt"
	"sort"
	"strings"
)

// Kind is the kind of object an entry is set on. The zero value is File.
type Kind int

// The kinds of object.
const (
	File Kind = iota
	Dir
)

// String is "file" or "dir".
func (k Kind) String() string {
	if k == Dir {
		return "dir"
	}
	return "file"
}

// Access says whether an entry allows or denies its mask. The zero value
// is Allow.
type Access int

// The kinds of entry.
const (
	Allow Access = iota
	Deny
)

// String is "allow" or "deny".
func (a Access) String() string {
	if a == Deny {
		return "deny"
	}
	return "allow"
}

// Inherit says which objects an entry applies to. The zero value is Self.
type Inherit int

// The scopes of an entry. On NTFS they are an ACE's inheritance flags.
const (
	// Self applies to the object only (no inheritance flags).
	Self Inherit = iota
	// Subdirs applies to every directory below, not to the object
	// (CONTAINER_INHERIT_ACE | INHERIT_ONLY_ACE).
	Subdirs
	// Files applies to every file below, not to the object
	// (OBJECT_INHERIT_ACE | INHERIT_ONLY_ACE).
	Files
	// Tree applies to the object and everything below
	// (CONTAINER_INHERIT_ACE | OBJECT_INHERIT_ACE).
	Tree
)

// String names the scope as the golden files do.
func (i Inherit) String() string {
	switch i {
	case Subdirs:
		return "subdirs"
	case Files:
		return "files"
	case Tree:
		return "tree"
	}
	return "self"
}

// Entry is one access-control entry for the container's SID, set on one
// object. The zero value allows nothing on an empty path, which Build
// never produces.
type Entry struct {
	// Path is the object, canonical (see Canonical).
	Path string
	// Kind is the kind of object at Path.
	Kind Kind
	// Access allows or denies Mask.
	Access Access
	// Inherit is the scope: the object, what lies below it, or both.
	Inherit Inherit
	// Mask are the rights.
	Mask Mask
	// Why names the part of the policy the entry comes from.
	Why string
}

// Apply is the path given to the security API: Path in extended-length
// form, so that paths deeper than MAX_PATH work.
func (e Entry) Apply() string { return Extended(e.Path) }

// names is the entry's mask as named for the objects it applies to: an
// entry on a directory's files names file rights.
func (e Entry) names() string {
	if e.Inherit == Files {
		return e.Mask.Names(File)
	}
	return e.Mask.Names(e.Kind)
}

// String is the entry as one line of a golden file.
func (e Entry) String() string {
	return fmt.Sprintf("%-5s %-4s %-7s %s %s  # %s", e.Access, e.Kind, e.Inherit, e.Path, e.names(), e.Why)
}

// Plan is every entry to add for one sandbox, and what to take away at
// Close. The zero value changes nothing.
type Plan struct {
	// Entries, in the order to apply them: sorted by path, parents first.
	Entries []Entry
	// Revoke are the paths, in the order to visit them at Close (children
	// first), on which every entry for the container's SID is removed:
	// exactly the paths Entries touch.
	Revoke []string
}

// String is the plan as a golden file: one entry a line, then one
// "revoke PATH" line a path.
func (p Plan) String() string {
	var b strings.Builder
	for _, e := range p.Entries {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	for _, r := range p.Revoke {
		b.WriteString("revoke " + r + "\n")
	}
	return b.String()
}

// Object is an existing path and its kind. The zero value is a file with
// an empty path, which Build refuses.
type Object struct {
	Path string
	Kind Kind
}

// Grant is one granted path: readable, and writable or executable as
// asked. The zero value is a read-only file grant on an empty path, which
// Build refuses.
type Grant struct {
	Object
	Write, Exec bool
}

// Input is what the planner needs of a sandbox's policy, with every path
// checked to exist and of the kind given. The zero value plans nothing.
type Input struct {
	// WorkDir is the working directory: readable and writable, and
	// executable with ExecWorkDir (build mode). Empty means none.
	WorkDir     string
	ExecWorkDir bool
	// Grants are the granted paths.
	Grants []Grant
	// Scratch are directories of this sandbox alone that it may write and
	// execute (build mode's GOTMPDIR).
	Scratch []string
	// Private are directories of this sandbox alone that it may write:
	// moat's private temp and home.
	Private []string
	// ContainerFolder is the AppContainer's own folder (its
	// %LOCALAPPDATA%\Packages\NAME\AC, which holds the temp directory
	// that TEMP and TMP name), which Windows made writable and executable
	// for the container: the planner only takes execute away from the
	// files in it. Empty means none.
	ContainerFolder string
	// HomeRead are paths in the user's home that the isolation level
	// shows, readable and executable.
	HomeRead []Object
	// Protected are existing protected paths: unreadable wherever a grant
	// of a parent would expose them; a grant of the path itself, or of a
	// path below it, still wins.
	Protected []Object
	// Deny are paths that nothing may open, whatever is granted around
	// them.
	Deny []Object
	// ReadOnly are paths that stay read-only inside writable grants.
	ReadOnly []Object
}

type key struct {
	path    string
	access  Access
	inherit Inherit
}

type builder struct {
	entries map[key]*Entry
	allowed []Object // every path an allow entry is set on
}

func (b *builder) add(e Entry) {
	k := key{Key(e.Path), e.Access, e.Inherit}
	if old, ok := b.entries[k]; ok {
		old.Mask |= e.Mask
		if !strings.Contains(old.Why, e.Why) {
			old.Why += ", " + e.Why
		}
		return
	}
	b.entries[k] = &e
	if e.Access == Allow && e.Inherit != Files && e.Inherit != Subdirs {
		b.allowed = append(b.allowed, Object{e.Path, e.Kind})
	}
}

// allow adds the entries that grant o: a file in one entry; a directory
// in three, because the rights of the directory itself, of the
// directories below and of the files below differ:
//   - the directory lists and traverses, and with write creates and
//     removes entries, but is never itself deleted or renamed by the
//     container (no DELETE);
//   - the directories below have the same rights, and DELETE with write;
//   - the files below read, write (with DELETE) only with write, and
//     EXECUTE only with exec: on NTFS traverse and execute are one bit,
//     so granting a directory traverse must not make its files runnable.
func (b *builder) allow(o Object, write, exec bool, why string) {
	if o.Kind == File {
		m := FileRead
		if write {
			m |= FileWrite
		}
		if exec {
			m |= Execute
		}
		b.add(Entry{Path: o.Path, Kind: File, Access: Allow, Inherit: Self, Mask: m, Why: why})
		return
	}
	dir, files := DirRead, FileRead
	if write {
		dir |= DirWrite
		files |= FileWrite | Delete
	}
	if exec {
		files |= Execute
	}
	b.add(Entry{Path: o.Path, Kind: Dir, Access: Allow, Inherit: Self, Mask: dir, Why: why})
	sub := dir
	if write {
		sub |= Delete
	}
	b.add(Entry{Path: o.Path, Kind: Dir, Access: Allow, Inherit: Subdirs, Mask: sub, Why: why})
	b.add(Entry{Path: o.Path, Kind: Dir, Access: Allow, Inherit: Files, Mask: files, Why: why})
}

// deny adds an entry that takes mask away from o and everything below it.
func (b *builder) deny(o Object, mask Mask, why string) {
	in := Self
	if o.Kind == Dir {
		in = Tree
	}
	b.add(Entry{Path: o.Path, Kind: o.Kind, Access: Deny, Inherit: in, Mask: mask, Why: why})
}

// underAllowed reports whether an allow entry already set covers p.
func (b *builder) underAllowed(p string, strictly bool) bool {
	for _, a := range b.allowed {
		if a.Kind == Dir && Under(p, a.Path) && (!strictly || Key(p) != Key(a.Path)) {
			return true
		}
		if !strictly && Key(p) == Key(a.Path) {
			return true
		}
	}
	return false
}

// writableAt reports whether the container may remove entries of
// directory d by the plan's allow entries (DELETE_CHILD on d).
func (b *builder) writableAt(d string) bool {
	for k, e := range b.entries {
		if k.access != Allow || e.Mask&DeleteChild == 0 {
			continue
		}
		if (e.Inherit == Self || e.Inherit == Tree) && Key(e.Path) == Key(d) {
			return true
		}
		if (e.Inherit == Subdirs || e.Inherit == Tree) && Under(d, e.Path) && Key(d) != Key(e.Path) {
			return true
		}
	}
	return false
}

func canonObject(o Object) (Object, error) {
	p, err := Canonical(o.Path)
	return Object{p, o.Kind}, err
}

// Build plans the entries of in. It refuses (an error matching ErrPath) a
// path that is not canonical, and an allow on a volume root, which would
// rewrite the access list of every file on the volume.
//
// What the planner does not grant is not reachable: an AppContainer's
// token is default-deny on the filesystem, reaching only objects whose
// access list names the container's SID, ALL APPLICATION PACKAGES or a
// capability it holds (the system directories name ALL APPLICATION
// PACKAGES; the users' profiles name none of them). So a protected path
// outside every grant needs no entry: it is simply not granted. A
// protected path inside a grant is denied explicitly; the deny is set on
// the object, so it comes before the grant's inherited allow, while a
// grant of the protected path itself, or below it, is explicit on its own
// object and comes before the inherited deny: the nearer rule wins, as
// on the other platforms.
//
// The program a command runs is not added: it must lie under an
// executable grant (the backend's ExecRoots), or in the system
// directories that every AppContainer may read and execute.
func Build(in Input) (Plan, error) {
	b := &builder{entries: map[key]*Entry{}}
	allow := func(o Object, write, exec bool, why string) error {
		c, err := canonObject(o)
		if err != nil {
			return err
		}
		if IsVolumeRoot(c.Path) {
			return &pathError{c.Path, "a volume root cannot be granted: its access list reaches every file on the volume"}
		}
		b.allow(c, write, exec, why)
		return nil
	}
	if in.WorkDir != "" {
		if err := allow(Object{in.WorkDir, Dir}, true, in.ExecWorkDir, "workdir"); err != nil {
			return Plan{}, err
		}
	}
	for _, g := range in.Grants {
		why := "grant r"
		if g.Write {
			why += "w"
		}
		if g.Exec {
			why += "x"
		}
		if err := allow(g.Object, g.Write, g.Exec, why); err != nil {
			return Plan{}, err
		}
	}
	for _, d := range in.Scratch {
		if err := allow(Object{d, Dir}, true, true, "build scratch"); err != nil {
			return Plan{}, err
		}
	}
	for _, d := range in.Private {
		if err := allow(Object{d, Dir}, true, false, "private"); err != nil {
			return Plan{}, err
		}
	}
	for _, o := range in.HomeRead {
		if err := allow(o, false, true, "level: home toolchain"); err != nil {
			return Plan{}, err
		}
	}
	if in.ContainerFolder != "" {
		c, err := Canonical(in.ContainerFolder)
		if err != nil {
			return Plan{}, err
		}
		// Windows gave the container full control of its own folder; the
		// nearer, inherited deny keeps what it writes here from running.
		// The temp directory gets its own, in case Windows gave it
		// explicit entries, whose inherited allow would come first.
		for _, d := range []string{c, c + `\Temp`} {
			b.add(Entry{Path: d, Kind: Dir, Access: Deny, Inherit: Files, Mask: Execute, Why: "container folder: write-xor-execute"})
		}
	}
	// An explicit grant beats a protection of the same path or of a
	// parent: the protection applies to what a grant of a parent exposes.
	granted := func(p string) bool {
		for _, g := range in.Grants {
			if gp, err := Canonical(g.Path); err == nil && Key(gp) == Key(p) {
				return true
			}
		}
		return false
	}
	var keep []Object // paths whose removal through the parent must be denied
	for _, o := range in.Protected {
		c, err := canonObject(o)
		if err != nil {
			return Plan{}, err
		}
		if granted(c.Path) || !b.underAllowed(c.Path, true) {
			continue
		}
		b.deny(c, All, "protected")
		keep = append(keep, c)
	}
	for _, o := range in.Deny {
		c, err := canonObject(o)
		if err != nil {
			return Plan{}, err
		}
		b.deny(c, All, "deny")
		keep = append(keep, c)
	}
	for _, o := range in.ReadOnly {
		c, err := canonObject(o)
		if err != nil {
			return Plan{}, err
		}
		b.deny(c, Modify, "read-only")
		keep = append(keep, c)
	}
	// DELETE_CHILD on a directory removes or renames any entry of it,
	// whatever the entry's own access list denies; where the plan lets the
	// container remove entries of the parent of a kept path, that right is
	// denied on the parent itself (its subdirectories keep theirs).
	for _, o := range keep {
		parent := Parent(o.Path)
		if Key(parent) != Key(o.Path) && b.writableAt(parent) {
			b.add(Entry{Path: parent, Kind: Dir, Access: Deny, Inherit: Self, Mask: DeleteChild, Why: "keeps " + o.Path + " in place"})
		}
	}
	return b.plan(), nil
}

func (b *builder) plan() Plan {
	var p Plan
	for _, e := range b.entries {
		p.Entries = append(p.Entries, *e)
	}
	sort.Slice(p.Entries, func(i, j int) bool {
		a, c := p.Entries[i], p.Entries[j]
		if ka, kc := Key(a.Path), Key(c.Path); ka != kc {
			return ka < kc
		}
		if a.Access != c.Access {
			return a.Access > c.Access // denies first, as NTFS orders them
		}
		return a.Inherit < c.Inherit
	})
	seen := map[string]bool{}
	for i := len(p.Entries) - 1; i >= 0; i-- {
		path := p.Entries[i].Path
		if !seen[Key(path)] {
			seen[Key(path)] = true
			p.Revoke = append(p.Revoke, path)
		}
	}
	return p
}

// Access simulates the access check of the container's SID against the
// entries of the plan alone, for an object at canonical path p of kind k
// (nothing else on the host granting it anything): the rights it is
// allowed. The entries on p itself come first, deny before allow; then
// those inherited, from the nearest directory up, each deny before allow,
// as NTFS orders explicit and inherited entries.
func (p Plan) Access(path string, k Kind) Mask {
	var decided, granted Mask
	visit := func(e Entry) {
		m := e.Mask &^ decided
		decided |= m
		if e.Access == Allow {
			granted |= m
		}
	}
	applies := func(e Entry, depth int) bool {
		if depth == 0 {
			return e.Inherit == Self || e.Inherit == Tree
		}
		switch e.Inherit {
		case Tree:
			return true
		case Subdirs:
			return k == Dir
		case Files:
			return k == File
		}
		return false
	}
	cur := path
	for depth := 0; ; depth++ {
		for _, a := range []Access{Deny, Allow} {
			for _, e := range p.Entries {
				if e.Access == a && Key(e.Path) == Key(cur) && applies(e, depth) {
					visit(e)
				}
			}
		}
		next := Parent(cur)
		if Key(next) == Key(cur) {
			break
		}
		cur = next
	}
	return granted
}

// CanRemove reports whether, by the plan alone, the container may delete
// or rename the object at p: DELETE on it, or DELETE_CHILD on its parent,
// which NTFS honours whatever the object's own entries deny.
func (p Plan) CanRemove(path string, k Kind) bool {
	parent := Parent(path)
	return p.Access(path, k)&Delete != 0 || (Key(parent) != Key(path) && p.Access(parent, Dir)&DeleteChild != 0)
}
