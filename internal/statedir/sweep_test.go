package statedir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeProcs is a procView with a fixed table of processes.
type fakeProcs struct {
	ns, boot string
	procs    map[int]struct {
		start uint64
		state byte
	}
	broken bool // stat fails for another reason than a missing process
}

func (f fakeProcs) self() (string, string, bool) { return f.ns, f.boot, f.ns != "" }

func (f fakeProcs) stat(pid int) (uint64, byte, error) {
	if f.broken {
		return 0, 0, errors.New("EACCES")
	}
	p, ok := f.procs[pid]
	if !ok {
		return 0, 0, fs.ErrNotExist
	}
	return p.start, p.state, nil
}

func TestOwnerDead(t *testing.T) {
	procs := map[int]struct {
		start uint64
		state byte
	}{
		10: {start: 500, state: 'S'},
		11: {start: 500, state: 'Z'},
		12: {start: 999, state: 'R'},
	}
	host := fakeProcs{ns: "pid:[1]", boot: "b1", procs: procs}
	base := owner{ID: "0123456789ab", PidNS: "pid:[1]", Boot: "b1", Start: 500}
	cases := []struct {
		name string
		pid  int
		edit func(*owner)
		view procView
		dead bool
	}{
		{"alive, same start time", 10, nil, host, false},
		{"no such process", 77, nil, host, true},
		{"zombie", 11, nil, host, true},
		{"pid reused by another process", 12, nil, host, true},
		{"rebooted since", 10, func(o *owner) { o.Boot = "b0" }, host, true},
		{"another pid namespace", 77, func(o *owner) { o.PidNS = "pid:[2]" }, host, false},
		{"unknown start time", 77, func(o *owner) { o.Start = 0 }, host, false},
		{"marker without namespace", 77, func(o *owner) { o.PidNS, o.Boot = "", "" }, host, false},
		{"host cannot tell", 77, nil, fakeProcs{}, false},
		{"stat fails otherwise", 77, nil, fakeProcs{ns: "pid:[1]", boot: "b1", broken: true}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			o.Pid = tc.pid
			if tc.edit != nil {
				tc.edit(&o)
			}
			if got := ownerDead(o, tc.view); got != tc.dead {
				t.Errorf("ownerDead = %v, want %v", got, tc.dead)
			}
		})
	}
}

func TestParseProcStat(t *testing.T) {
	tail := " 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 123456 20 21\n"
	cases := []struct {
		name, in string
		start    uint64
		state    byte
		ok       bool
	}{
		{"plain", "42 (sleep) S" + tail, 123456, 'S', true},
		{"name with spaces and parens", "42 (a) b (c) Z" + tail, 123456, 'Z', true},
		{"no parens", "42 sleep S" + tail, 0, 0, false},
		{"short", "42 (x) S 1 2 3", 0, 0, false},
		{"bad start", "42 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 nope", 0, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start, state, err := parseProcStat([]byte(tc.in))
			if (err == nil) != tc.ok || start != tc.start || state != tc.state {
				t.Errorf("parseProcStat = %d %q %v, want %d %q ok=%v", start, state, err, tc.start, tc.state, tc.ok)
			}
		})
	}
	// The real thing: this process is alive and running.
	start, _, err := hostProcs{}.stat(os.Getpid())
	if err != nil || start == 0 {
		t.Fatalf("stat of self: %d %v", start, err)
	}
}

func TestParseOwner(t *testing.T) {
	good := owner{ID: "0123456789ab", Pid: 7, Start: 9, PidNS: "pid:[4026531836]", Boot: "b-1", Token: strings.Repeat("ab", 16)}
	got, err := parseOwner([]byte(good.format()))
	if err != nil || got != good {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	bad := []struct{ name, in string }{
		{"empty", ""},
		{"no magic", strings.TrimPrefix(good.format(), ownerMagic+"\n")},
		{"other magic", strings.Replace(good.format(), ownerMagic, "moat-state 2", 1)},
		{"bad id", strings.Replace(good.format(), "id 0123456789ab", "id ../../etc", 1)},
		{"negative pid", strings.Replace(good.format(), "pid 7", "pid -7", 1)},
		{"missing token", strings.Replace(good.format(), "token "+good.Token+"\n", "", 1)},
		{"duplicate key", good.format() + "pid 8\n"},
		{"unknown key", good.format() + "path /etc\n"},
		{"too large", good.format() + strings.Repeat("x", maxOwnerSize)},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseOwner([]byte(tc.in)); err == nil {
				t.Errorf("parseOwner accepted %q", tc.in)
			}
		})
	}
}

func FuzzParseOwner(f *testing.F) {
	f.Add([]byte(owner{ID: "0123456789ab", Pid: 7, Start: 9, PidNS: "x", Boot: "y", Token: strings.Repeat("0", 32)}.format()))
	f.Add([]byte(ownerMagic + "\nid zz\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := parseOwner(data)
		if err != nil {
			return
		}
		again, err := parseOwner([]byte(o.format()))
		if err != nil || again != o {
			t.Fatalf("a parsed marker does not round-trip: %+v -> %+v, %v", o, again, err)
		}
	})
}

func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("1 (init) S 0 1 1 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 42 100 5\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _ = parseProcStat(data)
	})
}

// TestSweepStale plants state directories and working directories the
// way New makes them and checks that only a dead owner's go, and only
// what is moat's by more than its name.
func TestSweepStale(t *testing.T) {
	base := t.TempDir()
	host := fakeProcs{ns: "pid:[1]", boot: "b1", procs: map[int]struct {
		start uint64
		state byte
	}{10: {start: 500, state: 'S'}}}
	mkState := func(id string, o owner, mode os.FileMode) string {
		d := filepath.Join(base, "moat-"+id+"-state-x1")
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, ownerFileName), []byte(o.format()), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Mkdir(filepath.Join(d, "tmp"), 0o700)
		os.Chmod(d, mode)
		return d
	}
	mkWork := func(id string) string {
		d := filepath.Join(base, "moat-"+id+"-w1")
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
		return d
	}
	own := func(id string, pid int, start uint64) owner {
		return owner{ID: id, Pid: pid, Start: start, PidNS: "pid:[1]", Boot: "b1", Token: strings.Repeat("1", 32)}
	}
	const dead, live, odd, wrong, ns = "aaaaaaaaaaa1", "aaaaaaaaaaa2", "aaaaaaaaaaa3", "aaaaaaaaaaa4", "aaaaaaaaaaa5"
	deadState, deadWork := mkState(dead, own(dead, 77, 1), 0o700), mkWork(dead)
	liveState, liveWork := mkState(live, own(live, 10, 500), 0o700), mkWork(live)
	oddState := mkState(odd, own(odd, 77, 1), 0o755) // not 0700: not moat's
	wrongState := mkState(wrong, own(dead, 77, 1), 0o700)
	nsOwner := own(ns, 77, 1)
	nsOwner.PidNS = "pid:[2]"
	nsState := mkState(ns, nsOwner, 0o700)
	// A link named like a dead sandbox's state directory, to a directory
	// that must survive.
	victim := t.TempDir()
	os.WriteFile(filepath.Join(victim, ownerFileName), []byte(own("bbbbbbbbbbbb", 77, 1).format()), 0o600)
	link := filepath.Join(base, "moat-bbbbbbbbbbbb-state-x1")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	// An unrelated directory with a dead-looking name and no marker.
	plain := filepath.Join(base, "moat-cccccccccccc-state-x1")
	os.Mkdir(plain, 0o700)

	removed := sweepStale(base, host)
	gone := map[string]bool{deadState: true, deadWork: true}
	for _, p := range []string{deadState, deadWork, liveState, liveWork, oddState, wrongState, nsState, link, plain, victim} {
		_, err := os.Lstat(p)
		if exists := err == nil; exists == gone[p] {
			t.Errorf("%s: exists=%v after the sweep, want %v", filepath.Base(p), exists, !gone[p])
		}
	}
	if len(removed) != 2 {
		t.Errorf("removed %q, want the dead sandbox's two directories", removed)
	}
	if _, err := os.Stat(filepath.Join(victim, ownerFileName)); err != nil {
		t.Errorf("the link's target was touched: %v", err)
	}
}
