package hostinput

import (
	"os"
	"testing"
)

// BenchmarkRecordPlacesRecorded is what every run with a supplied working
// directory adds to its start once the place is recorded: one lstat.
func BenchmarkRecordPlacesRecorded(b *testing.B) {
	dir := b.TempDir()
	os.Chmod(dir, 0o700)
	s := Store{Dir: dir}
	place := b.TempDir()
	if err := s.RecordPlaces([]string{place}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.RecordPlaces([]string{place}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadConfig is the read of a small config file outside every
// place: the resolution, the ancestors' checks and the journal lookups.
func BenchmarkReadConfig(b *testing.B) {
	dir := b.TempDir()
	os.Chmod(dir, 0o700)
	s := Store{Dir: dir}
	p := b.TempDir() + "/moat.toml"
	os.WriteFile(p, []byte("isolation = \"strict\"\n"), 0o600)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Read(p, Options{Subject: "config", Store: s}); err != nil {
			b.Fatal(err)
		}
	}
}
