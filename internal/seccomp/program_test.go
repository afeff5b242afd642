package seccomp

import (
	"reflect"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/net/bpf"
)

func TestBuildAssembles(t *testing.T) {
	for _, arch := range []Arch{AMD64, ARM64} {
		for _, opts := range []Options{{}, {AllowInetStream: true}} {
			prog, err := Build(arch, opts)
			if err != nil {
				t.Fatalf("%s %+v: %v", arch, opts, err)
			}
			raw, err := bpf.Assemble(prog)
			if err != nil {
				t.Fatalf("%s %+v: assemble: %v", arch, opts, err)
			}
			if len(raw) == 0 || len(raw) >= 4096 {
				t.Errorf("%s %+v: %d instructions, want 1..4095", arch, opts, len(raw))
			}
			if _, ok := prog[len(prog)-1].(bpf.RetConstant); !ok {
				t.Errorf("%s %+v: last instruction %v is not a return", arch, opts, prog[len(prog)-1])
			}
			raw2, err := assemble(arch, opts)
			if err != nil || !reflect.DeepEqual(raw, raw2) {
				t.Errorf("%s %+v: assemble differs from bpf.Assemble(Build) (err %v)", arch, opts, err)
			}
			t.Logf("%s %+v: %d instructions", arch, opts, len(raw))
		}
	}
}

func TestBuildDeterministic(t *testing.T) {
	for _, arch := range []Arch{AMD64, ARM64} {
		a, _ := Build(arch, Options{AllowInetStream: true})
		for range 20 {
			b, _ := Build(arch, Options{AllowInetStream: true})
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("%s: two builds differ", arch)
			}
		}
	}
}

func TestBuildUnsupportedArch(t *testing.T) {
	for _, arch := range []Arch{"", "386", "arm", "riscv64", "AMD64"} {
		t.Run(string(arch), func(t *testing.T) {
			_, err := Build(arch, Options{})
			if err == nil || !strings.HasPrefix(err.Error(), "seccomp: arch ") {
				t.Fatalf("Build(%q) error = %v, want seccomp: arch ...", arch, err)
			}
			if _, err := assemble(arch, Options{}); err == nil {
				t.Fatalf("assemble(%q) succeeded", arch)
			}
		})
	}
}

func TestNativeArch(t *testing.T) {
	arch, ok := NativeArch()
	switch runtime.GOARCH {
	case "amd64", "arm64":
		if !ok || string(arch) != runtime.GOARCH {
			t.Fatalf("NativeArch() = %q, %v on %s", arch, ok, runtime.GOARCH)
		}
	default:
		if ok || arch != "" {
			t.Fatalf("NativeArch() = %q, %v on unsupported %s", arch, ok, runtime.GOARCH)
		}
	}
}

func TestAsmErrors(t *testing.T) {
	tests := []struct {
		name string
		prog func(a *asm)
		want string
	}{
		{"undefined label", func(a *asm) {
			a.jump(bpf.JumpEqual, 1, "nowhere", "")
			a.ret(0)
		}, `label "nowhere": not defined`},
		{"backward jump", func(a *asm) {
			a.label("back")
			a.ret(0)
			a.jump(bpf.JumpEqual, 1, "back", "")
			a.ret(0)
		}, `to label "back"`},
		{"label past the end", func(a *asm) {
			a.jump(bpf.JumpEqual, 1, "end", "")
			a.ret(0)
			a.label("end")
		}, `to label "end"`},
		{"too far", func(a *asm) {
			a.jump(bpf.JumpEqual, 1, "far", "")
			for range 256 {
				a.ret(0)
			}
			a.label("far")
			a.ret(0)
		}, "offset 256"},
		{"duplicate label", func(a *asm) {
			a.label("x")
			a.ret(0)
			a.label("x")
			a.ret(0)
		}, `label "x": defined twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a asm
			tt.prog(&a)
			_, err := a.finish()
			if err == nil || !strings.HasPrefix(err.Error(), "seccomp: program: ") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("finish() error = %v, want one containing %q", err, tt.want)
			}
		})
	}

	// The farthest legal jump.
	var a asm
	a.jump(bpf.JumpEqual, 1, "far", "")
	for range 255 {
		a.ret(0)
	}
	a.label("far")
	a.ret(1)
	prog, err := a.finish()
	if err != nil {
		t.Fatal(err)
	}
	if j := prog[0].(bpf.JumpIf); j.SkipTrue != 255 || j.SkipFalse != 0 {
		t.Fatalf("jump = %+v, want SkipTrue 255", j)
	}
}
