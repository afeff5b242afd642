// Package golden compares what a test produced with a file in testdata,
// and rewrites the file under `go test -update`. Only tests import it; it
// registers the -update flag of the test binary that does.
package golden

import (
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Check fails t unless got is byte for byte the content of file; under
// -update it first writes got to file. A missing file fails, naming the
// flag that writes it.
func Check(t testing.TB, file, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n--- got\n%s--- want\n%s", file, got, want)
	}
}
