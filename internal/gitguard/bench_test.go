package gitguard

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkTake is the start-time snapshot of a project: one repository
// with hooks, and 200 directories of 25 files each.
func BenchmarkTake(b *testing.B) {
	w := b.TempDir()
	for k, v := range repo(".git/") {
		p := filepath.Join(w, k)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if v == "" && k[len(k)-1] == '/' {
			os.MkdirAll(p, 0o755)
		} else {
			os.WriteFile(p, []byte(v), 0o644)
		}
	}
	for i := 0; i < 12; i++ {
		os.WriteFile(filepath.Join(w, ".git/hooks", fmt.Sprintf("h%d.sample", i)), make([]byte, 4096), 0o755)
	}
	for d := 0; d < 200; d++ {
		dir := filepath.Join(w, "src", fmt.Sprint(d))
		os.MkdirAll(dir, 0o755)
		for f := 0; f < 25; f++ {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.go", f)), []byte("package x\n"), 0o644)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Take([]string{w})
	}
}
