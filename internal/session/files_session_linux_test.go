package session

import (
	"testing"
)

// TestSessionFileAPI drives the file API through a Manager's sessions,
// made fresh and taken from the warm pool: their sandboxes must run the
// file server (GrantSelf at each moat.New).
func TestSessionFileAPI(t *testing.T) {
	for _, pool := range []int{-1, 1} {
		s := newSession(t, newManager(t, Options{WarmPool: pool}), CreateRequest{})
		if _, err := s.WriteFile("x.txt", []byte("hi"), 0o600); err != nil {
			t.Fatalf("WriteFile (pool %d): %v", pool, err)
		}
		b, info, err := s.ReadFile("x.txt", 0)
		if err != nil || string(b) != "hi" || info.Mode != "0600" || info.Path != s.Info().WorkDir+"/x.txt" {
			t.Errorf("ReadFile (pool %d): %q %+v %v", pool, b, info, err)
		}
		if l, err := s.List(""); err != nil || len(l) != 1 {
			t.Errorf("List (pool %d): %+v %v", pool, l, err)
		}
		if _, err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if _, _, err := s.ReadFile("x.txt", 0); err == nil {
			t.Errorf("ReadFile after Close passed")
		}
	}
}
