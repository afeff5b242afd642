package seccomp

import (
	"reflect"
	"strings"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

func TestAssemble(t *testing.T) {
	for _, arch := range []Arch{AMD64, ARM64} {
		for _, opts := range []Options{{}, {AllowInetStream: true}} {
			filter, err := Assemble(arch, opts)
			if err != nil {
				t.Fatalf("%s %+v: %v", arch, opts, err)
			}
			prog, _ := Build(arch, opts)
			raw, _ := bpf.Assemble(prog)
			want := make([]unix.SockFilter, len(raw))
			for i, r := range raw {
				want[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
			}
			if !reflect.DeepEqual(filter, want) {
				t.Errorf("%s %+v: Assemble differs from bpf.Assemble(Build)", arch, opts)
			}
		}
	}
	if _, err := Assemble("", Options{}); err == nil || !strings.HasPrefix(err.Error(), "seccomp: arch ") {
		t.Errorf("Assemble(zero Arch) error = %v", err)
	}
}

// TestInstallRejectsEmpty checks the argument check only: installing a real
// filter on a test thread would filter the test binary, so that is done in a
// child process (kernel_linux_test.go).
func TestInstallRejectsEmpty(t *testing.T) {
	for _, f := range [][]unix.SockFilter{nil, {}, make([]unix.SockFilter, 4097)} {
		err := Install(f)
		if err == nil || !strings.HasPrefix(err.Error(), "seccomp: install: ") {
			t.Errorf("Install(%d instructions) error = %v", len(f), err)
		}
	}
}
