//go:build unix

package cachehome

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzReadRecord: whatever a record file holds, reading it and pruning
// around it neither panics nor retires a store that a run holds.
func FuzzReadRecord(f *testing.F) {
	f.Add([]byte(`{"key":"0123456789abcdef0123456789abcdef","workdir":"/p","dev":1,"ino":2,"policy":"x","last_use":"2026-01-01T00:00:00Z","size":10}`))
	f.Add([]byte(`{"key":"0123456789abcdef0123456789abcdef","size":-1}`))
	f.Add([]byte(`{"key":"other"}`))
	f.Add([]byte(`[]`))
	f.Add([]byte{})
	f.Add(make([]byte, maxRecord+10))
	const key = "0123456789abcdef0123456789abcdef"
	f.Fuzz(func(t *testing.T, data []byte) {
		l := testLayout(t)
		must(t, os.MkdirAll(l.Records, 0o700))
		must(t, os.WriteFile(filepath.Join(l.Records, key+recordSuffix), data, 0o600))
		r, err := readRecord(l.Records, key)
		if err == nil && r.Key != key {
			t.Fatalf("record names %q", r.Key)
		}
		lease, err := Open(l, testProject(t), "p")
		must(t, err)
		defer lease.Close(0)
		if _, err := Prune(l, Bounds{MaxBytes: 1}, time.Now()); err != nil {
			t.Logf("prune: %v", err)
		}
		if !exists(lease.Stores()[0]) {
			t.Fatal("a held store was retired")
		}
	})
}
