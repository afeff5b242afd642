package aclplan

import (
	"strings"
	"testing"
)

// pool are the paths FuzzBuild draws from: nested, overlapping and
// differing only in case.
var pool = []string{
	`C:\Users\dev`, `C:\Users\dev\project`, `C:\Users\dev\.ssh`, `c:\users\DEV\.SSH\id_rsa`,
	`C:\Users\dev\project\.git`, `C:\Users\dev\project\.git\hooks`, `C:\data`, `C:\data\sub`,
	`D:\x`, `\\srv\share\dir`, `C:\Users\dev\AppData\Local\Packages\p\AC`,
}

// FuzzBuild: for any mix of grants and protections, no allow carries
// WRITE_DAC or WRITE_OWNER, a protected path inside a grant and not
// granted itself is unreadable, what is only written is never executable,
// and Revoke names each touched path once.
func FuzzBuild(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{1, 9, 9, 0, 3, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		var in Input
		in.WorkDir = pool[1]
		var protected []string
		for i := 0; i+1 < len(b) && i < 24; i += 2 {
			p := pool[int(b[i])%len(pool)]
			kind := Dir
			if strings.HasSuffix(p, "id_rsa") {
				kind = File
			}
			switch op := b[i+1] % 6; op {
			case 0, 1, 2, 3:
				in.Grants = append(in.Grants, Grant{Object: Object{p, kind}, Write: op&1 != 0, Exec: op&2 != 0})
			case 4:
				in.Protected = append(in.Protected, Object{p, kind})
				protected = append(protected, p)
			case 5:
				in.ReadOnly = append(in.ReadOnly, Object{p, kind})
			}
		}
		plan, err := Build(in)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range plan.Entries {
			if e.Access == Allow && e.Mask&(WriteDAC|WriteOwner) != 0 {
				t.Fatalf("%v", e)
			}
		}
		seen := map[string]bool{}
		for _, r := range plan.Revoke {
			if seen[Key(r)] {
				t.Fatalf("%s revoked twice", r)
			}
			seen[Key(r)] = true
		}
		granted := func(p string) (any, rwx bool) {
			for _, g := range in.Grants {
				if Key(g.Path) == Key(p) {
					any = true
				}
				if Under(p, g.Path) && g.Write && g.Exec {
					rwx = true
				}
			}
			return any, rwx
		}
		for _, p := range protected {
			// The working directory is a grant of its own path: it, and
			// a grant of the protected path, win over the protection.
			if g, _ := granted(p); g || Key(p) == Key(in.WorkDir) {
				continue
			}
			// A grant strictly inside it wins for what lies there.
			inner := Under(in.WorkDir, p)
			for _, g := range in.Grants {
				inner = inner || (Under(g.Path, p) && Key(g.Path) != Key(p))
			}
			f := p + `\probe.txt`
			k := File
			if strings.HasSuffix(p, "id_rsa") {
				f, k = p, File
			}
			if !inner && plan.Access(f, k)&ReadData != 0 {
				t.Fatalf("protected %s readable:\n%s", f, plan)
			}
		}
		for _, p := range pool {
			f := p + `\w.exe`
			m := plan.Access(f, File)
			if m&WriteData == 0 || m&Execute == 0 {
				continue
			}
			// Written and executable only under an rwx grant, or under
			// a grant with x and another with w (the union of two).
			_, rwx := granted(f)
			wGrant, xGrant := false, false
			for _, g := range in.Grants {
				if Under(f, g.Path) {
					wGrant, xGrant = wGrant || g.Write, xGrant || g.Exec
				}
			}
			if !rwx && !(xGrant && (wGrant || Under(f, in.WorkDir))) {
				t.Fatalf("%s writable and executable:\n%s", f, plan)
			}
		}
	})
}
