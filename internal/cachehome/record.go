package cachehome

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Record is what the host keeps about one store, beside it in the records
// directory, never in the store. The zero value records nothing.
type Record struct {
	// Key names the store.
	Key string `json:"key"`
	// WorkDir, Dev, Ino and Born are the project: the working
	// directory's path and identity when the store was made.
	WorkDir string `json:"workdir"`
	Dev     uint64 `json:"dev"`
	Ino     uint64 `json:"ino"`
	Born    string `json:"born,omitempty"`
	// Policy is the policy digest the key was computed from.
	Policy string `json:"policy"`
	// LastUse is when a run last released the store.
	LastUse time.Time `json:"last_use"`
	// Size is the store's size in bytes when it was last measured;
	// SizePartial says the measure ran out of budget or could not see
	// everything, so Size is a floor; [Prune] retires such a store.
	Size        int64 `json:"size"`
	SizePartial bool  `json:"size_partial,omitempty"`
}

// recordSuffix and lockSuffix end a key's record and lock files.
const (
	recordSuffix = ".rec"
	lockSuffix   = ".lock"
	maxRecord    = 16 << 10
)

// validKey reports whether k can be a key: 32 lower-case hex digits.
func validKey(k string) bool {
	if len(k) != 32 {
		return false
	}
	for _, c := range k {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// readRecord reads the record of key from dir without following a link
// or blocking, bounded in size.
func readRecord(dir, key string) (Record, error) {
	var r Record
	f, err := openNoFollow(filepath.Join(dir, key+recordSuffix))
	if err != nil {
		return r, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return r, err
	}
	if !fi.Mode().IsRegular() {
		return r, fmt.Errorf("record of %s: not a regular file", key)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxRecord+1))
	if err != nil {
		return r, err
	}
	if len(b) > maxRecord {
		return r, fmt.Errorf("record of %s: over %d bytes", key, maxRecord)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("record of %s: %w", key, err)
	}
	if r.Key != key {
		return r, fmt.Errorf("record of %s: names key %q", key, r.Key)
	}
	return r, nil
}

// writeRecord replaces the record of r.Key in dir atomically.
func writeRecord(dir string, r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".rec-*")
	if err != nil {
		return fmt.Errorf("record of %s: %w", r.Key, err)
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("record of %s: %w", r.Key, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, r.Key+recordSuffix)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("record of %s: %w", r.Key, err)
	}
	return nil
}

// listRecords returns the keys with a record in dir.
func listRecords(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var keys []string
	for _, e := range ents {
		if k, ok := strings.CutSuffix(e.Name(), recordSuffix); ok && validKey(k) {
			keys = append(keys, k)
		}
	}
	return keys, nil
}
