package moat

import "testing"

// BenchmarkHomeView is the cost, paid in every New, of deciding what the
// sandbox sees of the homes on this host (protected paths and the curated
// toolchain entries) at the default level.
func BenchmarkHomeView(b *testing.B) {
	cfg, err := normalize(Config{Isolation: IsolationDefault}, nil)
	if err != nil {
		b.Fatal(err)
	}
	s := &Sandbox{cfg: cfg}
	var n int
	for b.Loop() {
		n = len(protectStateRoot(homeView(&s.cfg), &s.caches).Protected)
	}
	b.ReportMetric(float64(n), "protected")
}
