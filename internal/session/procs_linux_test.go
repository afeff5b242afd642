package session

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// waitOutput polls process id's output until stdout holds want.
func waitOutput(t *testing.T, s *Session, id, want string) ProcOutput {
	t.Helper()
	var out ProcOutput
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var err error
		out, err = s.Output(id, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out.Stdout.Data), want) {
			return out
		}
	}
	t.Fatalf("process %s never wrote %q; got %+v", id, want, out)
	return out
}

func TestProcLifecycle(t *testing.T) {
	s := newSession(t, newManager(t, Options{}), CreateRequest{})
	p, err := s.Start(StartRequest{Argv: []string{"sh", "-c", "trap 'echo got-term; exit 7' TERM; echo ready; echo err >&2; while :; do sleep 0.05; done"}})
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != "p1" || p.State != "running" || p.PID <= 0 {
		t.Fatalf("Start: %+v", p)
	}
	out := waitOutput(t, s, p.ID, "ready")
	if out.Proc.State != "running" || out.Stdout.Offset != 0 || out.Stdout.Next != int64(len(out.Stdout.Data)) {
		t.Errorf("Output while running: %+v", out)
	}
	if ps := s.Procs(); len(ps) != 1 || ps[0].ID != "p1" {
		t.Errorf("Procs: %+v", ps)
	}
	stopped, err := s.Stop(p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stopped.State != "exited" || stopped.ExitCode == nil || *stopped.ExitCode != 7 {
		t.Errorf("Stop: %+v, want exited 7 by its TERM trap", stopped)
	}
	out, err = s.Output(p.ID, 0, 0)
	if err != nil || !strings.Contains(string(out.Stdout.Data), "got-term") || !strings.HasPrefix(string(out.Stderr.Data), "err\n") {
		t.Errorf("Output after stop: %+v, %v", out, err)
	}
	// Reading from Next gives nothing new.
	again, _ := s.Output(p.ID, out.Stdout.Next, out.Stderr.Next)
	if len(again.Stdout.Data) != 0 || again.Stdout.Offset != out.Stdout.Next {
		t.Errorf("Output from next: %+v", again)
	}
}

// TestProcStopKills stops a process that ignores TERM: after the grace
// it is killed.
func TestProcStopKills(t *testing.T) {
	s := newSession(t, newManager(t, Options{}), CreateRequest{})
	p, err := s.Start(StartRequest{Argv: []string{"sh", "-c", "trap '' TERM; echo ready; while :; do sleep 0.05; done"}})
	if err != nil {
		t.Fatal(err)
	}
	waitOutput(t, s, p.ID, "ready")
	stopped, err := s.Stop(p.ID)
	if err != nil || stopped.State != "exited" || stopped.Signal != "KILL" {
		t.Errorf("Stop: %+v, %v; want killed", stopped, err)
	}
}

func TestProcSignal(t *testing.T) {
	s := newSession(t, newManager(t, Options{}), CreateRequest{})
	p, err := s.Start(StartRequest{Argv: []string{"sh", "-c", "trap 'echo usr1' USR1; echo ready; while :; do sleep 0.05; done"}})
	if err != nil {
		t.Fatal(err)
	}
	waitOutput(t, s, p.ID, "ready")
	if err := s.Signal(p.ID, "USR1"); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, s, p.ID, "usr1")
	var e *Error
	if err := s.Signal(p.ID, "STOP"); !errors.As(err, &e) || e.Code != CodeBadRequest {
		t.Errorf("Signal STOP: %v", err)
	}
	if _, err := s.Output("p9", 0, 0); !errors.As(err, &e) || e.Code != CodeNotFound {
		t.Errorf("Output of p9: %v", err)
	}
	if err := s.Signal(p.ID, "KILL"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if ps := s.Procs(); ps[0].State == "exited" {
			if ps[0].Signal != "KILL" || *ps[0].ExitCode != -1 {
				t.Errorf("after KILL: %+v", ps[0])
			}
			return
		}
	}
	t.Error("KILL did not end the process")
}

// TestProcRingOffsets writes more than OutputCap: the oldest bytes are
// dropped and counted.
func TestProcRingOffsets(t *testing.T) {
	s := newSession(t, newManager(t, Options{OutputCap: 1024}), CreateRequest{})
	p, err := s.Start(StartRequest{Argv: []string{"sh", "-c", "head -c 5000 /dev/zero | tr '\\0' a; echo; echo done"}})
	if err != nil {
		t.Fatal(err)
	}
	out := waitOutput(t, s, p.ID, "done")
	total := int64(5000 + 1 + 5)
	if out.Stdout.Next != total || out.Stdout.Offset != total-1024 || out.Stdout.Dropped != total-1024 || len(out.Stdout.Data) != 1024 {
		t.Errorf("chunk offset %d next %d dropped %d len %d; want %d %d %d 1024", out.Stdout.Offset, out.Stdout.Next, out.Stdout.Dropped, len(out.Stdout.Data), total-1024, total, total-1024)
	}
	if _, err := s.Output(p.ID, -1, 0); err == nil {
		t.Error("a negative offset was accepted")
	}
}

func TestCloseStopsProcs(t *testing.T) {
	m := newManager(t, Options{})
	s := newSession(t, m, CreateRequest{})
	marker := "4343.1"
	if _, err := s.Start(StartRequest{Argv: []string{"sleep", marker}}); err != nil {
		t.Fatal(err)
	}
	var pids []int
	for deadline := time.Now().Add(10 * time.Second); len(pids) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		pids = pidsWithArg(t, marker)
	}
	if len(pids) == 0 {
		t.Fatal("control: the background sleep never showed on the host")
	}
	doc, err := s.Close()
	if err != nil || doc.Command != "session" || doc.Report == nil {
		t.Errorf("Close: %+v, %v", doc, err)
	}
	if left := pidsWithArg(t, marker); len(left) > 0 {
		t.Errorf("pids %v outlived Close", left)
	}
	var e *Error
	if _, err := s.Run(t.Context(), RunRequest{Argv: []string{"true"}}, nil); !errors.As(err, &e) || e.Code != CodeClosed {
		t.Errorf("Run after Close: %v", err)
	}
	if _, err := m.Get(s.ID()); !errors.As(err, &e) || e.Code != CodeNotFound {
		t.Errorf("Get after Close: %v", err)
	}
}
