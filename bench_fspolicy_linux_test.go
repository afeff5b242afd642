//go:build linux

package moat_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/moat-sandbox/moat"
)

// BenchmarkSealTree is what Config.Seal costs for a directory of 10,000
// entries, end to end: New (which builds the sandbox at once, listing the
// directory and giving each entry its rule) plus one /bin/true and Close,
// and a warm sandbox's /bin/true (whose ruleset holds those rules), each
// against the same with Seal empty.
func BenchmarkSealTree(b *testing.B) {
	w := b.TempDir()
	sealed := filepath.Join(w, "sealed")
	if err := os.Mkdir(sealed, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 10000; i++ {
		if err := os.WriteFile(filepath.Join(sealed, fmt.Sprintf("f%05d", i)), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		seal []string
	}{{"empty", nil}, {"sealed-10000", []string{sealed}}} {
		cfg := moat.Config{WorkDir: w, Seal: c.seal}
		b.Run("new-run-close/"+c.name, func(b *testing.B) {
			for b.Loop() {
				sb, err := moat.New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				if err := sb.Command("/bin/true").Run(); err != nil {
					b.Fatal(err)
				}
				sb.Close()
			}
		})
		b.Run("warm/"+c.name, func(b *testing.B) {
			sb := newSandbox(b, cfg)
			for b.Loop() {
				if err := sb.Command("/bin/true").Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNewRunCloseEmpty is New, one /bin/true and Close with an empty
// Config: the start-up an empty filesystem policy must leave unchanged.
func BenchmarkNewRunCloseEmpty(b *testing.B) {
	for b.Loop() {
		sb, err := moat.New(moat.Config{})
		if err != nil {
			b.Fatal(err)
		}
		if err := sb.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		sb.Close()
	}
}
