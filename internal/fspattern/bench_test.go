package fspattern

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// tree100k builds 1,111 directories (10 × 10 × 10 below the root) holding
// 100,000 files, one .env in every tenth leaf directory.
func tree100k(b *testing.B) string {
	b.Helper()
	root := filepath.Join(b.TempDir(), "tree")
	n := 0
	for i := 0; i < 10; i++ {
		for j := 0; j < 10; j++ {
			for k := 0; k < 10; k++ {
				d := filepath.Join(root, fmt.Sprintf("d%d", i), fmt.Sprintf("s%d", j), fmt.Sprintf("t%d", k))
				if err := os.MkdirAll(d, 0o755); err != nil {
					b.Fatal(err)
				}
				for f := 0; f < 100; f++ {
					name := fmt.Sprintf("f%02d.go", f)
					if f == 0 && k == 0 {
						name = ".env"
					}
					if err := os.WriteFile(filepath.Join(d, name), nil, 0o644); err != nil {
						b.Fatal(err)
					}
					n++
				}
			}
		}
	}
	if n != 100000 {
		b.Fatalf("%d files", n)
	}
	return root
}

func BenchmarkMaterialize100k(b *testing.B) {
	root := tree100k(b)
	cases := []struct {
		name       string
		deny, writ []string
	}{
		{"env-anywhere", []string{"**/.env*"}, nil},
		{"env-anywhere-writable-half", []string{"**/.env*", "!.env.example"}, []string{"d0", "d1", "d2", "d3", "d4"}},
		{"literal", []string{"d3/s3/t3/.env", "secrets/key.pem", "d9/s9"}, []string{"d1/s1"}},
		{"prefix-glob", []string{"d5/**/*.pem", "d7/s7/*.env"}, nil},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var res *Result
			for b.Loop() {
				var err error
				res, err = Materialize(Input{Root: root, Deny: c.deny, Writable: c.writ, NoFragments: true})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(res.Seal)), "seal-dirs")
			b.ReportMetric(float64(len(res.Deny)), "deny-paths")
			b.ReportMetric(float64(res.DirsRead), "dirs-read")
			b.ReportMetric(float64(res.EntriesSeen), "entries")
		})
	}
}
