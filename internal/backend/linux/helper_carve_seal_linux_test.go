package linux

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

func TestCarveSeal(t *testing.T) {
	const all = uint64(0xffff)
	const read = uint64(fsReadExec)
	tree := fakeTree("/w/", "/w/a", "/w/s/", "/w/s/old", "/w/s/olddir/", "/w/s/olddir/x", "/w/s/link -> /etc", "/w/s/deny", "/w/b/")
	tests := []struct {
		name   string
		rules  []llRule
		carved []carveRule
		want   []string
	}{
		{"seal inside a tree",
			[]llRule{{Path: "/w", Access: all}}, []carveRule{{Path: "/w/s", Keep: all, Seal: true}},
			[]string{"/w 8", "/w/a ffff", "/w/b ffff", "/w/s 8", "/w/s/deny ffff", "/w/s/old ffff", "/w/s/olddir ffff"}},
		{"seal the rule's own directory",
			[]llRule{{Path: "/w/s", Access: all}}, []carveRule{{Path: "/w/s", Keep: all, Seal: true}},
			[]string{"/w/s 8", "/w/s/deny ffff", "/w/s/old ffff", "/w/s/olddir ffff"}},
		{"seal with a denied entry",
			[]llRule{{Path: "/w", Access: all}}, []carveRule{{Path: "/w/s", Keep: all, Seal: true}, {Path: "/w/s/deny"}},
			[]string{"/w 8", "/w/a ffff", "/w/b ffff", "/w/s 8", "/w/s/old ffff", "/w/s/olddir ffff"}},
		{"sealed and read-only",
			[]llRule{{Path: "/w", Access: all}}, []carveRule{{Path: "/w/s", Keep: read, Seal: true}},
			[]string{"/w 8", "/w/a ffff", "/w/b ffff", "/w/s 8", "/w/s/deny " + strconv.FormatUint(read, 16), "/w/s/old " + strconv.FormatUint(read, 16), "/w/s/olddir " + strconv.FormatUint(read, 16)}},
		{"seal of a file is no carve",
			[]llRule{{Path: "/w", Access: all}}, []carveRule{{Path: "/w/a", Keep: all, Seal: true}},
			[]string{"/w 8", "/w/a ffff", "/w/b ffff", "/w/s ffff"}},
		{"grant inside a sealed directory is kept",
			[]llRule{{Path: "/w/s/olddir", Access: 3}}, []carveRule{{Path: "/w/s", Keep: all, Seal: true}},
			[]string{"/w/s/olddir 3"}},
		{"seal outside the rule",
			[]llRule{{Path: "/w/b", Access: all}}, []carveRule{{Path: "/w/s", Keep: all, Seal: true}},
			[]string{"/w/b ffff"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, r := range carve(tt.rules, tt.carved, tree) {
				got = append(got, r.Path+" "+strconv.FormatUint(r.Access, 16))
			}
			sort.Strings(got)
			sort.Strings(tt.want)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	if unix.LANDLOCK_ACCESS_FS_READ_DIR != 8 {
		t.Fatal("the table above writes READ_DIR as 8")
	}
}

// TestApplyFSEmpty: an empty filesystem policy adds nothing to the spec.
func TestApplyFSEmpty(t *testing.T) {
	e := &Engine{}
	e.policy.WorkDir = "/w"
	var s helperSpec
	e.applyFS(&s)
	if !reflect.DeepEqual(s, helperSpec{}) {
		t.Errorf("an empty policy changed the spec: %+v", s)
	}
}

// BenchmarkSealTenThousand is what sealing a directory of 10,000 entries
// costs a sandbox: planning the rules (one listing of the directory) and
// building a ruleset with them (an open and a landlock_add_rule per
// entry), which the zygote does once at New, plus, per command, the
// ruleset it installs holds the 10,000 rules.
func BenchmarkSealTenThousand(b *testing.B) {
	dir := b.TempDir()
	sealed := filepath.Join(dir, "sealed")
	if err := os.Mkdir(sealed, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 10000; i++ {
		if err := os.WriteFile(filepath.Join(sealed, fmt.Sprintf("f%05d", i)), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	abi := Probe().LandlockABI
	s := &helperSpec{WorkDir: dir, LandlockABI: abi, Carve: []carveRule{{Path: sealed, Keep: handledFS(abi), Seal: true}}}
	b.Run("plan", func(b *testing.B) {
		for b.Loop() {
			if n := len(planRules(s, osReadDir)); n != 10002 {
				b.Fatalf("%d rules", n)
			}
		}
	})
	plan := planRules(s, osReadDir)
	b.Run("ruleset", func(b *testing.B) {
		if abi < 1 {
			b.Fatal("no Landlock here: the cost of the rules cannot be measured")
		}
		for b.Loop() {
			rs, err := buildRuleset(s, plan)
			if err != nil {
				b.Fatal(err)
			}
			rs.close()
		}
	})
	unsealed := &helperSpec{WorkDir: dir, LandlockABI: abi}
	b.Run("unsealed", func(b *testing.B) {
		for b.Loop() {
			rs, err := buildRuleset(unsealed, planRules(unsealed, osReadDir))
			if err != nil {
				b.Fatal(err)
			}
			rs.close()
		}
	})
}
