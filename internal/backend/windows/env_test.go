package windows

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"
)

const (
	hostTmp = `C:\Users\dev\AppData\Local\Temp\moat-1\tmp`
	acTemp  = `C:\Users\dev\AppData\Local\Packages\moat.sandbox.0123456789ab\AC\Temp`
)

func hostLookup(name string) (string, bool) {
	v, ok := map[string]string{"SystemRoot": `C:\WINDOWS`, "PATHEXT": ".COM;.EXE;.BAT", "ComSpec": `C:\WINDOWS\system32\cmd.exe`}[name]
	return v, ok
}

func TestContainerEnv(t *testing.T) {
	cases := []struct {
		name string
		env  []string
		want []string
	}{
		{"moat's temp becomes the container's (W1)",
			[]string{"TMPDIR=" + hostTmp, "TMP=" + hostTmp, "TEMP=" + hostTmp, "HOME=C:\\h", "PATH=C:\\WINDOWS\\system32"},
			[]string{"ComSpec=C:\\WINDOWS\\system32\\cmd.exe", "HOME=C:\\h", "PATH=C:\\WINDOWS\\system32", "PATHEXT=.COM;.EXE;.BAT", "SystemRoot=C:\\WINDOWS", "TEMP=" + acTemp, "TMP=" + acTemp, "TMPDIR=" + acTemp, "USERPROFILE=C:\\h"}},
		{"a caller's temp is kept",
			[]string{"TEMP=C:\\custom", "SystemRoot=D:\\win", "USERPROFILE=C:\\u"},
			[]string{"ComSpec=C:\\WINDOWS\\system32\\cmd.exe", "PATHEXT=.COM;.EXE;.BAT", "SystemRoot=D:\\win", "TEMP=C:\\custom", "TMP=" + acTemp, "TMPDIR=" + acTemp, "USERPROFILE=C:\\u"}},
		{"names are one without regard to case; the last wins",
			[]string{"Path=a", "PATH=b", "temp=" + strings.ToUpper(hostTmp), "=C:=C:\\x"},
			[]string{"=C:=C:\\x", "ComSpec=C:\\WINDOWS\\system32\\cmd.exe", "PATH=b", "PATHEXT=.COM;.EXE;.BAT", "SystemRoot=C:\\WINDOWS", "TEMP=" + acTemp, "TMP=" + acTemp, "TMPDIR=" + acTemp}},
	}
	for _, c := range cases {
		got := ContainerEnv(c.env, hostTmp, acTemp, hostLookup)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
		if !strings.Contains(acTemp, `\Packages\`) {
			t.Error("W1: the container's temp lies under \\Packages\\")
		}
	}
}

func TestSortEnvIgnoresCase(t *testing.T) {
	env := []string{"b=1", "A=2", "_x=3", "a_b=4", "Zz=5", "=D:=D:\\"}
	SortEnv(env)
	want := []string{"=D:=D:\\", "A=2", "a_b=4", "b=1", "Zz=5", "_x=3"}
	if !reflect.DeepEqual(env, want) {
		t.Errorf("%q, want %q", env, want)
	}
}

func TestEnvBlock(t *testing.T) {
	b, err := EnvBlock([]string{"A=1", "É=é"})
	if err != nil {
		t.Fatal(err)
	}
	want := append(utf16.Encode([]rune("A=1\x00É=é\x00")), 0)
	if !reflect.DeepEqual(b, want) {
		t.Errorf("%v, want %v", b, want)
	}
	if b, _ := EnvBlock(nil); !reflect.DeepEqual(b, []uint16{0, 0}) {
		t.Errorf("empty block %v", b)
	}
	for _, bad := range []string{"A=1\x00B=2", "NOVALUE", "=", "A=\xff"} {
		if _, err := EnvBlock([]string{bad}); !errors.Is(err, ErrCommandLine) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// FuzzContainerEnv: whatever the entries, the environment holds each name
// once (without regard to case), sorted, each entry NAME=VALUE, and the
// temp variables name the container's temp unless the caller chose one.
func FuzzContainerEnv(f *testing.F) {
	f.Add("PATH=a\x1fpath=b\x1fTEMP="+hostTmp, "=C:=C:\\")
	f.Add("A\x1f=\x1f==", "TMP=x")
	f.Fuzz(func(t *testing.T, a, b string) {
		env := append(strings.Split(a, "\x1f"), b)
		out := ContainerEnv(env, hostTmp, acTemp, nil)
		seen := map[string]bool{}
		for i, kv := range out {
			n := strings.ToUpper(envName(kv))
			if n == kv || !strings.HasPrefix(kv, envName(kv)+"=") {
				t.Fatalf("%q: entry %q without NAME=", env, kv)
			}
			if seen[n] {
				t.Fatalf("%q: %s twice in %q", env, n, out)
			}
			seen[n] = true
			if i > 0 && strings.ToUpper(envName(out[i-1])) > n {
				t.Fatalf("%q: not sorted: %q", env, out)
			}
		}
		for _, name := range []string{"TEMP", "TMP", "TMPDIR"} {
			if !seen[name] {
				t.Fatalf("%q: no %s in %q", env, name, out)
			}
		}
	})
}
