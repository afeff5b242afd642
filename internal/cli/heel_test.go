package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/policy"
)

// parsed is what run's flags make of args: the resolved Config, without
// its network policy, and the network settings it was built from.
type parsed struct {
	cfg     moat.Config
	network policy.Network
}

// parseRun parses args as run's flags, with stdin as --config -'s input.
func parseRun(t *testing.T, args []string, stdin *os.File) (parsed, *sandboxFlags, error) {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.SetOutput(discard{})
	f := addSandboxFlags(fs)
	f.heel.stdin = stdin
	if err := fs.Parse(args); err != nil {
		return parsed{}, f, flagError(nil, err)
	}
	cfg, err := f.config()
	if err != nil {
		return parsed{}, f, err
	}
	n, err := f.network()
	cfg.Network = nil
	return parsed{cfg: cfg, network: n}, f, err
}

// Each heel flag sets exactly the Config that moat's own name sets.
func TestHeelFlagAliases(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "moat.toml")
	if err := os.WriteFile(cfgFile, []byte("isolation = \"strict\"\n[limits]\nmax-processes = 77\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		heel, canon []string
		check       func(t *testing.T, p parsed) // what both must set
	}{
		{"--network allow", []string{"--network", "allow"}, []string{"--network", "allow-all"},
			func(t *testing.T, p parsed) {
				if p.network.Mode != policy.NetworkAllowAll {
					t.Errorf("network %+v", p.network)
				}
			}},
		{"--network=allow", []string{"--network=allow"}, []string{"--network=allow-all"}, nil},
		{"--max-memory", []string{"--max-memory", "1G"}, []string{"--memory", "1G"},
			func(t *testing.T, p parsed) {
				if p.cfg.Limits.MemoryBytes != 1<<30 {
					t.Errorf("memory %d", p.cfg.Limits.MemoryBytes)
				}
			}},
		{"--max-memory=unlimited", []string{"--max-memory=unlimited"}, []string{"--memory=unlimited"}, nil},
		{"--max-cpu-time", []string{"--max-cpu-time", "30"}, []string{"--cpu-time", "30"},
			func(t *testing.T, p parsed) {
				if p.cfg.Limits.CPUSeconds != 30 {
					t.Errorf("cpu %d", p.cfg.Limits.CPUSeconds)
				}
			}},
		{"--max-file-size", []string{"--max-file-size", "1M"}, []string{"--file-size", "1M"},
			func(t *testing.T, p parsed) {
				if p.cfg.Limits.FileSizeBytes != 1<<20 {
					t.Errorf("file size %d", p.cfg.Limits.FileSizeBytes)
				}
			}},
		{"--max-processes", []string{"--max-processes", "64"}, []string{"--processes", "64"},
			func(t *testing.T, p parsed) {
				if p.cfg.Limits.Processes != 64 {
					t.Errorf("processes %d", p.cfg.Limits.Processes)
				}
			}},
		{"--max-open-files", []string{"--max-open-files", "256"}, []string{"--open-files", "256"}, nil},
		{"--max-disk", []string{"--max-disk", "2G"}, []string{"--disk", "2G"}, nil},
		{"--max-disk-inodes", []string{"--max-disk-inodes", "5000"}, []string{"--disk-inodes", "5000"}, nil},
		{"-c", []string{"-c", cfgFile}, []string{"--config", cfgFile},
			func(t *testing.T, p parsed) {
				if p.cfg.Isolation != moat.IsolationStrict || p.cfg.Limits.Processes != 77 {
					t.Errorf("the file was not read: %+v", p.cfg)
				}
			}},
		{"the file's limit beaten by an alias", []string{"-c", cfgFile, "--max-processes", "19"}, []string{"--config", cfgFile, "--processes", "19"},
			func(t *testing.T, p parsed) {
				if p.cfg.Limits.Processes != 19 {
					t.Errorf("processes %d", p.cfg.Limits.Processes)
				}
			}},
		{"-e", []string{"-e", "A=1", "-e", "TERM"}, []string{"--env", "A=1", "--env", "TERM"},
			func(t *testing.T, p parsed) {
				if !reflect.DeepEqual(p.cfg.Env, moat.Env{Passthrough: []string{"TERM"}, Set: []string{"A=1"}}) {
					t.Errorf("env %+v", p.cfg.Env)
				}
			}},
		{"--env-passthrough", []string{"--env-passthrough", "TERM", "--env-passthrough=LANG"}, []string{"--env", "TERM", "--env", "LANG"},
			func(t *testing.T, p parsed) {
				if !reflect.DeepEqual(p.cfg.Env.Passthrough, []string{"TERM", "LANG"}) {
					t.Errorf("env %+v", p.cfg.Env)
				}
			}},
		{"--protect-keychain=false", []string{"--protect-keychain=false"}, []string{"--protect-keychains=false"},
			func(t *testing.T, p parsed) {
				if p.cfg.Security.ProtectKeychains {
					t.Errorf("security %+v", *p.cfg.Security)
				}
			}},
		{"--working-dir", []string{"--working-dir", dir}, []string{"--workdir", dir},
			func(t *testing.T, p parsed) {
				if p.cfg.WorkDir != dir {
					t.Errorf("workdir %q", p.cfg.WorkDir)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _, err := parseRun(t, tt.heel, nil)
			if err != nil {
				t.Fatalf("heel's %q: %v", tt.heel, err)
			}
			c, _, err := parseRun(t, tt.canon, nil)
			if err != nil {
				t.Fatalf("moat's %q: %v", tt.canon, err)
			}
			if !reflect.DeepEqual(h, c) {
				t.Errorf("heel's %q gives\n%+v\nmoat's %q\n%+v", tt.heel, h, tt.canon, c)
			}
			if d, _, _ := parseRun(t, nil, nil); reflect.DeepEqual(h, d) {
				t.Errorf("%q changes nothing", tt.heel)
			}
			if tt.check != nil {
				tt.check(t, h)
			}
		})
	}
}

// The security switches heel has, each as a flag with an optional =BOOL,
// set their own field, and =false undoes it.
func TestHeelSecurityFlags(t *testing.T) {
	tests := []struct {
		flag  string
		field string // of moat.SecurityConfig
		def   bool   // at the CLI's default level
	}{
		{"--protect-shell-history", "ProtectShellHistory", true},
		{"--protect-package-credentials", "ProtectPackageCredentials", true},
		{"--allow-npu", "AllowNPU", false},
		{"--allow-hardware", "AllowHardware", false},
		{"--allow-tcc-prompts", "AllowTCCPrompts", false},
		{"--protect-keychain", "ProtectKeychains", true},
	}
	field := func(s *moat.SecurityConfig, name string) bool {
		return reflect.ValueOf(s).Elem().FieldByName(name).Bool()
	}
	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			def, _, err := parseRun(t, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := field(def.cfg.Security, tt.field); got != tt.def {
				t.Fatalf("default %s = %v, want %v", tt.field, got, tt.def)
			}
			for _, c := range []struct {
				arg  string
				want bool
			}{{tt.flag, true}, {tt.flag + "=true", true}, {tt.flag + "=false", false}} {
				p, _, err := parseRun(t, []string{c.arg}, nil)
				if err != nil {
					t.Fatalf("%s: %v", c.arg, err)
				}
				if got := field(p.cfg.Security, tt.field); got != c.want {
					t.Errorf("%s: %s = %v", c.arg, tt.field, got)
				}
				// Nothing else moves.
				want := *def.cfg.Security
				reflect.ValueOf(&want).Elem().FieldByName(tt.field).SetBool(c.want)
				if *p.cfg.Security != want {
					t.Errorf("%s: security %+v, want %+v", c.arg, *p.cfg.Security, want)
				}
			}
			if _, _, err := parseRun(t, []string{tt.flag + "=maybe"}, nil); err == nil || !strings.Contains(err.Error(), "want true or false") {
				t.Errorf("%s=maybe: %v", tt.flag, err)
			}
		})
	}
}

// -v is MOAT_TRACE=1.
func TestHeelVerbose(t *testing.T) {
	for _, arg := range []string{"-v", "--verbose"} {
		t.Run(arg, func(t *testing.T) {
			t.Setenv("MOAT_TRACE", "")
			if _, _, err := parseRun(t, []string{arg}, nil); err != nil {
				t.Fatal(err)
			}
			if os.Getenv("MOAT_TRACE") != "1" {
				t.Errorf("%s left MOAT_TRACE=%q", arg, os.Getenv("MOAT_TRACE"))
			}
		})
	}
	t.Setenv("MOAT_TRACE", "")
	if _, _, err := parseRun(t, nil, nil); err != nil || os.Getenv("MOAT_TRACE") != "" {
		t.Errorf("without -v: MOAT_TRACE=%q, %v", os.Getenv("MOAT_TRACE"), err)
	}
}

// --keep-working-dir and [workdir] keep make a fresh working directory
// that stays, and name it for the message at exit.
func TestHeelKeepWorkingDir(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "moat.toml")
	if err := os.WriteFile(cfgFile, []byte("[workdir]\nkeep = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--keep-working-dir"}, {"--keep-working-dir=true"}, {"-c", cfgFile}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			p, f, err := parseRun(t, args, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(f.heel.kept)
			if f.heel.kept == "" || p.cfg.WorkDir != f.heel.kept {
				t.Fatalf("kept %q, workdir %q", f.heel.kept, p.cfg.WorkDir)
			}
			var b strings.Builder
			f.printKept(&b)
			if b.String() != "moat: working directory kept: "+f.heel.kept+"\n" {
				t.Errorf("message %q", b.String())
			}
		})
	}
	t.Run("the command line's =false beats the file", func(t *testing.T) {
		p, f, err := parseRun(t, []string{"-c", cfgFile, "--keep-working-dir=false"}, nil)
		if err != nil || f.heel.kept != "" || p.cfg.WorkDir != "" {
			t.Errorf("kept %q, workdir %q, %v", f.heel.kept, p.cfg.WorkDir, err)
		}
		var b strings.Builder
		f.printKept(&b)
		if b.Len() != 0 {
			t.Errorf("message %q", b.String())
		}
	})
}

// --config - reads the file from standard input, and the command then
// gets /dev/null, never the rest of it.
func TestHeelConfigFromStdin(t *testing.T) {
	in := filepath.Join(t.TempDir(), "stdin")
	if err := os.WriteFile(in, []byte("network = \"allow\"\nisolation = \"strict\"\n[limits]\nmax-processes = 33\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--config", "-"}, {"-c", "-"}, {"--config=-"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r, err := os.Open(in)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			p, f, err := parseRun(t, args, r)
			if err != nil {
				t.Fatal(err)
			}
			if p.network.Mode != policy.NetworkAllowAll || p.cfg.Isolation != moat.IsolationStrict || p.cfg.Limits.Processes != 33 {
				t.Errorf("config %+v, network %+v", p.cfg, p.network)
			}
			if got := f.childStdin(os.Stdin); got != nil {
				t.Errorf("the command's stdin is %v, want /dev/null (nil)", got)
			}
		})
	}
	t.Run("a bad file names standard input and its line", func(t *testing.T) {
		r, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		w := filepath.Join(t.TempDir(), "bad")
		os.WriteFile(w, []byte("\nbogus = 1\n"), 0o600)
		b, _ := os.Open(w)
		defer b.Close()
		_, _, err = parseRun(t, []string{"-c", "-"}, b)
		if err == nil || errorLine(err) != `moat: config "<stdin>": line 2: unknown key "bogus"` {
			t.Errorf("error %v", err)
		}
	})
	t.Run("without it the command keeps stdin", func(t *testing.T) {
		_, f, err := parseRun(t, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if f.childStdin(os.Stdin) != os.Stdin {
			t.Error("stdin not passed on")
		}
	})
}

// -c is --config on run, shell and doctor, and the code on python; -e
// and -v are heel's everywhere.
func TestHeelShorthands(t *testing.T) {
	root := newRoot(stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr})
	for _, c := range []struct {
		cmd             string
		c, e, v, config string
	}{
		{"run", "config", "env", "verbose", "c"},
		{"shell", "config", "env", "verbose", "c"},
		{"doctor", "config", "env", "verbose", "c"},
		{"python", "code", "env", "verbose", ""},
	} {
		sub, _, err := root.Find([]string{c.cmd})
		if err != nil {
			t.Fatal(err)
		}
		fs := sub.Flags()
		for letter, want := range map[string]string{"c": c.c, "e": c.e, "v": c.v} {
			if fl := fs.ShorthandLookup(letter); fl == nil || fl.Name != want {
				t.Errorf("moat %s -%s is %v, want --%s", c.cmd, letter, fl, want)
			}
		}
		if got := fs.Lookup("config").Shorthand; got != c.config {
			t.Errorf("moat %s --config shorthand %q, want %q", c.cmd, got, c.config)
		}
		// The aliases are the canonical flags.
		if fs.Lookup("max-memory") != fs.Lookup("memory") || fs.Lookup("memory") == nil {
			t.Errorf("moat %s: --max-memory is not --memory", c.cmd)
		}
		if u := fs.Lookup("memory").Usage; !strings.Contains(u, "alias: --max-memory, heel's name") {
			t.Errorf("moat %s --memory help %q does not name its alias", c.cmd, u)
		}
	}
}
