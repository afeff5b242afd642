package policy

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// FuzzParse: no document makes Parse or Merge panic; every rejection is a
// one-line *Error for the file; what is accepted has absolute grants with
// a valid mode, and normalized network entries.
func FuzzParse(f *testing.F) {
	for _, doc := range []string{
		"",
		"network = \"allow-list\"\nallow-domains = [\"*.crates.io\", \"example.com:443\"]\naudit-log = \"a.jsonl\"\naudit-rotate = \"daily\"\n",
		"isolation = \"permissive\"\n[security]\nprotect-credentials = false\nallow-gpu = true\n",
		"[grants]\n\"/usr/share\" = \"r\"\n\"./target\" = \"rwx\"\n\"~/.cache\" = \"rw\"\n",
		"grants = { \"/a\" = \"xr\" }\n",
		"[limits]\nmax-memory = \"2G\"\nmax-cpu-time = 60\nmax-disk = \"unlimited\"\ntimeout = \"5m\"\nnice = 19\nio-priority = \"utility\"\n",
		"[workdir]\npath = \"job\"\n[env]\npassthrough = [\"TERM\"]\nset = { A = \"1\" }\n",
		"allow-local = [\"10.0.0.0/8\", \"::1\"]\nnetwork = \"allow-all\"\n",
		"grantz = 1\n",
		"[grants]\n\"/x\" = \"w\"\n",
		"[grants]\na.b.c = \"r\"\n",
		"[[grants]]\n[[security]]\n",
		"security = 1\nlimits = []\n",
		"network = \n",
		"a = { b = { c = [1, 2, { d = 3 }] } }\n",
		"[env.set]\nLD_PRELOAD = \"x\"\n",
		"\"\\u0000\" = 1\n",
		"[limits]\nmax-memory = 1e9\ntimeout = 1979-05-27T07:32:00Z\n",
		// heel's spellings (heel.go)
		"network = \"allow\"\n[workdir]\npath = \"job\"\nkeep = true\n",
		"[workdir]\nkeep = \"yes\"\n",
		"[security]\nprotect-keychain = false\nprotect-shell-history = false\nprotect-package-credentials = true\nallow-npu = true\nallow-hardware = false\nallow-tcc-prompts = true\n",
		"[security]\nprotect-keychain = true\nprotect-keychains = false\n",
		"[python]\ninterpreter = \"python3\"\npackages = [\"numpy\"]\nsystem-site-packages = false\n",
	} {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		const name = "/cfg/moat.toml"
		file, err := Parse(name, []byte(doc))
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.File != name || !strings.HasPrefix(err.Error(), `config "/cfg/moat.toml": `) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q is not an *Error for the file", err)
			}
			return
		}
		for _, g := range file.Grants {
			if !filepath.IsAbs(g.Path) || g.Access == 0 || g.Access&^(moat.READ|moat.WRITE|moat.EXEC) != 0 {
				t.Fatalf("grant %+v", g)
			}
		}
		for _, d := range file.AllowDomains {
			if again, err := ParseDomain(d); err != nil || again != d {
				t.Fatalf("domain %q not normalized", d)
			}
		}
		for _, p := range file.AllowLocal {
			if again, err := ParseLocal(p); err != nil || again != p {
				t.Fatalf("local %q not canonical", p)
			}
		}
		r, err := Merge(file.Layer)
		if err != nil {
			if strings.HasPrefix(err.Error(), "moat: ") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Merge error %q", err)
			}
			return
		}
		if r.Config.Security == nil {
			t.Fatal("Merge left Security nil")
		}
	})
}
