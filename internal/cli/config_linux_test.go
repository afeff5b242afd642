package cli

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMoatRunConfigFile(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	data := mkdir(t, dir, "data")
	if err := os.WriteFile(filepath.Join(data, "secret.txt"), []byte("from the grant\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, data} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := writeConfig(t, dir, `
isolation = "strict"

[grants]
"data" = "r"

[env.set]
GREETING = "from the file"
`)
	read := []string{"--", "sh", "-c", `cat ` + filepath.Join(data, "secret.txt") + ` && echo "$GREETING"`}
	tests := []struct {
		name string
		args []string
		want []expect
	}{
		{name: "the file's grant and env apply", args: append([]string{"run", "--config", file}, read...),
			want: []expect{exits(0), stdoutIs("from the grant\nfrom the file\n"), stderrIs("")}},
		{name: "the command line's env beats the file's", args: append([]string{"run", "--config", file, "--env", "GREETING=from the flag"}, read...),
			want: []expect{exits(0), stdoutIs("from the grant\nfrom the flag\n")}},
		// The positive control: without the file, the same read fails.
		{name: "no grant without the file", args: append([]string{"run", "--isolation", "strict"}, read...),
			want: []expect{exits(1), stdoutIs("")}},
		{name: "an unknown key stops moat before it runs anything", args: []string{"run", "--config", writeConfig(t, mkdir(t, dir, "bad"), "grantz = 1\n"), "--", "true"},
			want: []expect{exits(2), stdoutIs(""), oneMoatLine("line 1", `unknown key "grantz"`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runMoat(t, nil, tt.args...)
			for _, e := range tt.want {
				if p := e(r); p != "" {
					t.Error(p)
				}
			}
		})
	}
}
