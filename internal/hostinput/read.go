package hostinput

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// DefaultMax bounds the bytes Read keeps when Options.Max is 0.
const DefaultMax = 1 << 20

// Options say how to read one host input. The zero value reads at most
// DefaultMax bytes, names the file "file", and knows no place a sandbox
// could write but what the file's own permissions say.
type Options struct {
	// Subject names what the file is for in messages: "config".
	Subject string
	// Max bounds the bytes read; a larger file is refused. 0 means
	// DefaultMax.
	Max int64
	// Store is the user's journal of writable places and trusted files.
	Store Store
	// Current are the places the sandbox of the current run can write,
	// when they are known before the read; see also [Input.CheckCurrent].
	Current []Place
	// TopControl says the file's name is one moat pins at the top of every
	// writable place (a policy fragment: .moat-*, .heimdall-*): read-only
	// for the run when it exists, moved aside by Close (or the next run's
	// sweep) when the run made it. A recorded place that is the file's own
	// directory then does not make it suspect; one above it still does.
	// False counts every recorded place.
	TopControl bool
}

// Input is a host input that was read and not refused. The zero value is
// no file.
type Input struct {
	// Name is the path as given.
	Name string
	// Real is the absolute path of the file opened, every link followed.
	Real string
	// Data is its content, for Read; nil for Check.
	Data []byte
	// Sum is the hex SHA-256 of its content; "" when Check had no need of
	// it.
	Sum string

	subject string
	links   []string // the links followed on the way, by their own path
	store   Store
	trusted bool // Sum is pinned for Real
	f       *os.File
}

// Read opens path once, refuses it when a sandbox could have written it
// (see the package doc) and its content is not trusted, and returns its
// content, at most o.Max bytes. Every refusal is an [*Error]; a file that
// cannot be read is an error naming it.
func Read(path string, o Options) (*Input, error) {
	in, err := open(path, o)
	if err != nil {
		return nil, err
	}
	defer in.close()
	max := o.Max
	if max <= 0 {
		max = DefaultMax
	}
	h := sha256.New()
	data, err := io.ReadAll(io.TeeReader(io.LimitReader(in.f, max+1), h))
	if err != nil {
		return nil, in.fail(err)
	}
	if int64(len(data)) > max {
		return nil, in.fail(fmt.Errorf("larger than %s", sizeName(max)))
	}
	in.Data, in.Sum = data, hex.EncodeToString(h.Sum(nil))
	if err := in.judge(o); err != nil {
		return nil, err
	}
	return in, nil
}

// Check is Read for a file moat runs or loads rather than parses (an
// interpreter, a library, a model): it reads the content, up to o.Max
// bytes (0: no bound), only when the file is suspect and must be matched
// against a pin. The path stays a path for whoever uses it next; the
// check holds for the file's real path (Input.Real), which the caller
// should use.
func Check(path string, o Options) (*Input, error) {
	in, err := open(path, o)
	if err != nil {
		return nil, err
	}
	defer in.close()
	if err := in.judge(o); err != nil {
		return nil, err
	}
	return in, nil
}

// CheckCurrent refuses the input when it lies in one of places, which the
// sandbox of the current run can write, or was reached through a link
// there, unless its content is trusted. The caller calls it once the run's
// places are known, before the run starts.
func (in *Input) CheckCurrent(places []Place) error {
	if in == nil {
		return nil
	}
	for _, l := range in.links {
		if pl, ok := within(l, places); ok {
			return &Error{Subject: in.subject, Path: in.Name, Problem: fmt.Sprintf("it is reached through the link %s in %s %s, which the sandbox of this run can write and redirect", l, pl.What, pl.Path)}
		}
	}
	pl, ok := within(in.Real, places)
	if !ok || in.trusted {
		return nil
	}
	if in.Sum != "" {
		if ok, err := in.store.Trusted(in.Real, in.Sum); err != nil {
			return in.fail(err)
		} else if ok {
			return nil
		}
	}
	return &Error{Subject: in.subject, Path: in.Name, Problem: currentProblem(pl), Trustable: in.Sum != ""}
}

// judge refuses the input when it is suspect and not trusted. Read has set
// Sum; for Check it is computed here when needed.
func (in *Input) judge(o Options) error {
	if err := in.checkLinks(o); err != nil {
		return err
	}
	fi, err := in.f.Stat()
	if err != nil {
		return in.fail(err)
	}
	if !fi.Mode().IsRegular() {
		return in.fail(errors.New("not a regular file"))
	}
	problem, err := in.suspect(fi, o)
	if err != nil {
		return in.fail(err)
	}
	if problem == "" {
		return nil
	}
	if in.Sum == "" {
		if in.Sum, err = hashFile(in.f, o.Max); err != nil {
			return in.fail(err)
		}
	}
	ok, err := o.Store.Trusted(in.Real, in.Sum)
	if err != nil {
		return in.fail(err)
	}
	if !ok {
		return &Error{Subject: in.subject, Path: in.Name, Problem: problem, Trustable: true}
	}
	in.trusted = true
	return nil
}

// checkLinks refuses the input when a link followed on its way lies in a
// place a sandbox of this run or an earlier one could write: the sandbox
// could point it at another file, so no pin of the target helps.
func (in *Input) checkLinks(o Options) error {
	for _, l := range in.links {
		if pl, ok := within(l, o.Current); ok {
			return &Error{Subject: in.subject, Path: in.Name, Problem: fmt.Sprintf("it is reached through the link %s in %s %s, which the sandbox of this run can write and redirect", l, pl.What, pl.Path)}
		}
		past, err := o.Store.PastPlace(l)
		if err != nil {
			return in.fail(err)
		}
		if past != "" {
			return &Error{Subject: in.subject, Path: in.Name, Problem: fmt.Sprintf("it is reached through the link %s in %s, which a sandbox of an earlier run could write and redirect", l, past)}
		}
	}
	return nil
}

// CheckDir refuses the directory at path (a --find-links directory) when
// it lies in a place a sandbox of this run or an earlier one could write,
// or is reached through a link there. A directory cannot be pinned: the
// fix is to move it.
func CheckDir(path string, o Options) error {
	in, real, links, err := resolveInput(path, o)
	if err != nil {
		return err
	}
	in.Real, in.links = real, links
	if err := in.checkLinks(o); err != nil {
		return err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return in.fail(err)
	}
	if !fi.IsDir() {
		return in.fail(errors.New("not a directory"))
	}
	if pl, ok := within(real, o.Current); ok {
		return &Error{Subject: in.subject, Path: path, Problem: currentProblem(pl)}
	}
	past, err := o.Store.PastPlace(real)
	if err != nil {
		return in.fail(err)
	}
	if past != "" {
		return &Error{Subject: in.subject, Path: path, Problem: fmt.Sprintf("it lies in %s, which a sandbox of an earlier run could write", past)}
	}
	return nil
}

// suspect returns why a sandbox, or another user, could have written the
// opened file, or "".
func (in *Input) suspect(fi fs.FileInfo, o Options) (string, error) {
	if pl, ok := within(in.Real, o.Current); ok {
		return currentProblem(pl), nil
	}
	skip := ""
	if o.TopControl {
		skip = filepath.Dir(in.Real)
	}
	past, err := o.Store.pastPlaceBut(in.Real, skip)
	if err != nil {
		return "", err
	}
	if past != "" {
		return fmt.Sprintf("it lies in %s, which a sandbox of an earlier run could write", past), nil
	}
	if p := othersMayWrite(fi, in.Real); p != "" {
		return p, nil
	}
	for d := filepath.Dir(in.Real); ; d = filepath.Dir(d) {
		dfi, err := os.Lstat(d)
		if err != nil {
			return "", err
		}
		if p := othersMayWriteDir(dfi); p != "" {
			return fmt.Sprintf("the directory %s %s", d, p), nil
		}
		if d == filepath.Dir(d) {
			return "", nil
		}
	}
}

// currentProblem says why a file in pl is suspect.
func currentProblem(pl Place) string {
	if pl.UserWritable {
		return pl.What + ": the sandbox of this run can write it"
	}
	return fmt.Sprintf("%s %s holds it, and the sandbox of this run can write there", pl.What, pl.Path)
}
