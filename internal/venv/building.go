package venv

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// A venv is built where it will be used, not in a temporary directory
// renamed into place: a venv records its own path (the shebang lines of
// its console scripts, bin/activate), so a renamed one would run the old
// path's interpreter. The manifest, written only once the build checked
// out, is the commit point instead; the build record says which venv was
// being built, and by whom, until then.

// buildRecord is written beside the manifest before Create changes
// anything, and removed once the manifest is written or what Create made
// is undone. One left behind marks a build that was killed: the next
// Create (holding the caller's lock, so the recorded owner is gone)
// removes what that build made before it looks at the path. The zero
// value records a build of nothing.
type buildRecord struct {
	// Format is the record layout's version.
	Format int `json:"format"`
	// Path is the venv being built.
	Path string `json:"path"`
	// Made says Create made the venv in this build (from nothing, or in
	// an empty directory, see Existed); false for a build that adds to a
	// venv that was already there, which the next Create keeps.
	Made bool `json:"made"`
	// Existed says Path was an empty directory before the build: undoing
	// the build empties it rather than removing it.
	Existed bool `json:"existed"`
	// Pid is the owner, moat's process, for the message.
	Pid int `json:"pid"`
}

// maxBuildRecord bounds what readBuildRecord reads.
const maxBuildRecord = 16 << 10

// buildRecordPath is where the build record of the venv whose manifest is
// manifest lives.
func buildRecordPath(manifest string) string { return manifest + ".building" }

// writeBuildRecord writes r for the venv whose manifest is manifest,
// synced, replacing any earlier one.
func writeBuildRecord(manifest string, r buildRecord) error {
	r.Format = manifestFormat
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	p := buildRecordPath(manifest)
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("venv build record %q: %v", p, bare(err))
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
	if err != nil {
		return fmt.Errorf("venv build record %q: %v", p, bare(err))
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(p)
		return fmt.Errorf("venv build record %q: %v", p, bare(err))
	}
	syncDir(filepath.Dir(p))
	return nil
}

// readBuildRecord reads the build record beside manifest: fs.ErrNotExist
// when there is none. It is read as the manifest is: no link followed,
// never blocking, bounded.
func readBuildRecord(manifest string) (buildRecord, error) {
	var r buildRecord
	f, err := os.OpenFile(buildRecordPath(manifest), os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return r, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return r, errors.New("not a regular file")
	}
	dec := json.NewDecoder(&limited{f: f, n: maxBuildRecord})
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return buildRecord{}, err
	}
	if r.Format != manifestFormat {
		return buildRecord{}, errors.New("unknown format")
	}
	return r, nil
}

// removeBuildRecord removes the build record beside manifest.
func removeBuildRecord(manifest string) {
	_ = os.Remove(buildRecordPath(manifest))
	syncDir(filepath.Dir(manifest))
}

// sweepKilledBuild undoes what a killed Create of the venv at path made,
// as its build record (beside manifest) says, and removes the record and
// any temporary manifest it left. It must run under the caller's lock,
// which proves the recorded owner is no longer building. It reports what
// it removed, "" for nothing.
func sweepKilledBuild(path, manifest string) (string, error) {
	tmps, _ := filepath.Glob(manifest + ".tmp-*")
	for _, t := range tmps {
		_ = os.Remove(t)
	}
	r, err := readBuildRecord(manifest)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		// Not a record Create wrote: name it rather than guess.
		return "", fmt.Errorf("venv build record %q: %v; remove it to build again", buildRecordPath(manifest), bare(err))
	}
	what := ""
	if r.Made && r.Path == path {
		// The manifest, if any, describes what was there before the
		// killed build began: none of it is left.
		if err := os.Remove(manifest); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("venv manifest %q: %v", manifest, bare(err))
		}
		undoCreate(path, r.Existed)
		what = fmt.Sprintf("removed the half-built venv %s left by a build that was stopped (moat pid %d)", path, r.Pid)
	}
	removeBuildRecord(manifest)
	return what, nil
}

// syncDir makes a directory's entries durable, best effort.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
