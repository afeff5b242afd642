//go:build linux

package workloads_test

import (
	"strings"
	"testing"
)

var cProject = map[string]string{
	"main.c":   "#include <stdio.h>\nint main(void) { puts(\"hello from app\"); return 0; }\n",
	"Makefile": "app: main.c\n\tcc -O2 -o app main.c\n",
}

// make && ./app: make and the compiler pass in both modes; ./app, written
// by the linker, runs only in build mode. Without it the shell's exit 126
// is recorded as a refusal naming --build.
func TestCMakeApp(t *testing.T) {
	need(t, "make", "cc")
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, cProject)
			sb := newSandbox(t, config(dir, m.build))
			r := sh(t, sb, "make && ./app")
			if m.build {
				mustPass(t, "make && ./app", r)
				if !strings.Contains(r.Out, "hello from app") {
					t.Fatalf("./app did not run: %s", r)
				}
				return
			}
			wxRefused(t, "make && ./app", r)
			if r.Code != 126 || !strings.Contains(r.Out, "cc -O2 -o app main.c") {
				t.Fatalf("want make to pass and ./app to exit 126: %s", r)
			}
			if !hasExecRefusal(sb) {
				t.Fatalf("exit 126 left no exec refusal naming --build: %v", sb.Refusals())
			}
		})
	}
}
