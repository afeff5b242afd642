package session

import (
	"runtime"
	"testing"
	"time"
)

// Sizes of TestOutputBounded's flood.
const (
	floodSessions = 4
	floodProcs    = 12
	floodBytes    = 3_000_000 // each stream of each process
	floodBound    = 8 << 20   // MaxTotalOutput
	floodMargin   = 24 << 20  // the heap's slack over the bound
)

// TestOutputBounded: many background processes flooding both streams in
// several sessions keep, all together, at most MaxTotalOutput, measured
// by the rings' own accounting and by the heap; each stream keeps its
// newest bytes with exact offsets; a new session shrinks the others'
// share. The positive control: the same flood with the bounds lifted
// keeps far more, by both measures.
func TestOutputBounded(t *testing.T) {
	kept, grew := flood(t, Options{SessionOutputCap: 4 << 20, MaxTotalOutput: floodBound})
	if kept > floodBound || grew > floodBound+floodMargin {
		t.Errorf("bounded: the rings keep %d bytes, the heap grew %d; want at most %d (+%d on the heap)", kept, grew, floodBound, floodMargin)
	}
	t.Logf("bounded: kept %d bytes, heap grew %d", kept, grew)
	kept, grew = flood(t, Options{SessionOutputCap: 1 << 40, MaxTotalOutput: 1 << 40})
	if want := int64(floodSessions * floodProcs * 2 << 20); kept < want || grew < floodBound+floodMargin {
		t.Errorf("control: the rings keep %d bytes, the heap grew %d; want %d, and the heap past %d", kept, grew, want, floodBound+floodMargin)
	}
	t.Logf("control: kept %d bytes, heap grew %d", kept, grew)
}

// flood runs the flood under opt (OutputCap 1 MiB) and returns the bytes
// the rings keep and how much the heap grew.
func flood(t *testing.T, opt Options) (kept, grew int64) {
	opt.OutputCap = 1 << 20
	m := newManager(t, opt)
	var ss []*Session
	for range floodSessions {
		ss = append(ss, newSession(t, m, CreateRequest{}))
	}
	before := heap()
	cmd := "head -c 3000000 /dev/zero; head -c 3000000 /dev/zero >&2"
	for _, s := range ss {
		for range floodProcs {
			if _, err := s.Start(StartRequest{Argv: []string{"sh", "-c", cmd}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, s := range ss {
		waitExited(t, s)
	}
	grew = heap() - before
	kept = m.keptOutput()
	share := int(min(opt.OutputCap, int(m.outputBudget(floodSessions)/(2*floodProcs))))
	checkShares(t, ss, share)
	// A new session shrinks the others' budgets.
	newSession(t, m, CreateRequest{})
	if k := m.keptOutput(); k > m.opt.MaxTotalOutput {
		t.Errorf("after a new session: %d bytes kept, more than %d", k, m.opt.MaxTotalOutput)
	}
	checkShares(t, ss, int(min(opt.OutputCap, int(m.outputBudget(floodSessions+1)/(2*floodProcs)))))
	for _, s := range ss {
		s.Close()
	}
	return kept, grew
}

// checkShares: every stream of every process keeps exactly its share of
// the newest bytes, with offsets that add up.
func checkShares(t *testing.T, ss []*Session, share int) {
	t.Helper()
	for _, s := range ss {
		for _, p := range s.Procs() {
			out, err := s.Output(p.ID, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []Chunk{out.Stdout, out.Stderr} {
				if c.Next != floodBytes || len(c.Data) != share || c.Offset != floodBytes-int64(share) || c.Dropped != c.Offset {
					t.Fatalf("%s: offset %d next %d dropped %d, %d bytes; want %d bytes of %d", p.ID, c.Offset, c.Next, c.Dropped, len(c.Data), share, floodBytes)
				}
			}
		}
	}
}

// waitExited waits until every background process of s has exited.
func waitExited(t *testing.T, s *Session) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		running := 0
		for _, p := range s.Procs() {
			if p.State == "running" {
				running++
			}
		}
		if running == 0 {
			return
		}
	}
	t.Fatal("the flood did not end")
}

// heap is the live heap, after a collection.
func heap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
