package venv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sweepKilledBuild undoes only what the recorded build made: the venv it
// made, the contents of the empty directory it filled, nothing of a venv
// that was there before; it removes the record and stray temporary
// manifests either way, and names a record it did not write.
func TestSweepKilledBuild(t *testing.T) {
	tests := []struct {
		name    string
		record  string // the record's content; "" writes none
		rec     buildRecord
		wantDir bool // the venv directory is still there
		wantIn  bool // its file is still there
		wantErr string
	}{
		{name: "no record", wantDir: true, wantIn: true},
		{name: "made it", rec: buildRecord{Made: true}, wantDir: false},
		{name: "filled an empty directory", rec: buildRecord{Made: true, Existed: true}, wantDir: true, wantIn: false},
		{name: "added to a venv", rec: buildRecord{Made: false}, wantDir: true, wantIn: true},
		{name: "another path", rec: buildRecord{Made: true, Path: "/elsewhere"}, wantDir: true, wantIn: true},
		{name: "garbage", record: "{not json", wantDir: true, wantIn: true, wantErr: "remove it to build again"},
		{name: "unknown field", record: `{"format":1,"path":"x","made":true,"rm":"/"}`, wantDir: true, wantIn: true, wantErr: "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			venv, man := filepath.Join(dir, "v"), filepath.Join(dir, "v.json")
			if err := os.MkdirAll(filepath.Join(venv, "bin"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(venv, "bin", "python"), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(man+".tmp-abc", []byte("{}"), 0o600); err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.record != "":
				if err := os.WriteFile(buildRecordPath(man), []byte(tt.record), 0o600); err != nil {
					t.Fatal(err)
				}
			case tt.name != "no record":
				r := tt.rec
				if r.Path == "" {
					r.Path = venv
				}
				if err := writeBuildRecord(man, r); err != nil {
					t.Fatal(err)
				}
			}
			what, err := sweepKilledBuild(venv, man)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			_, derr := os.Lstat(venv)
			_, ferr := os.Lstat(filepath.Join(venv, "bin", "python"))
			if (derr == nil) != tt.wantDir || (ferr == nil) != tt.wantIn {
				t.Errorf("venv there %v, its file there %v; want %v, %v (%q)", derr == nil, ferr == nil, tt.wantDir, tt.wantIn, what)
			}
			if _, err := os.Lstat(man + ".tmp-abc"); err == nil {
				t.Error("a temporary manifest was left")
			}
			if _, err := os.Lstat(buildRecordPath(man)); (err == nil) != (tt.wantErr != "") {
				t.Errorf("record left: %v", err == nil)
			}
		})
	}
}
