package session

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

// frameScript is a shell script that writes frames (JSON bodies), then
// does rest.
func frameScript(rest string, bodies ...string) string {
	var b strings.Builder
	b.WriteString("printf '")
	for _, body := range bodies {
		var hdr [4]byte
		binary.BigEndian.PutUint32(hdr[:], uint32(len(body)))
		for _, c := range append(hdr[:], body...) {
			fmt.Fprintf(&b, "\\%03o", c)
		}
	}
	b.WriteString("'; " + rest)
	return b.String()
}

// TestFilesHostileServer: a server that breaks the protocol, lies, hangs
// or dies is stopped, its reply never reaches the caller, and the call
// fails with CodeInternal within the deadline.
func TestFilesHostileServer(t *testing.T) {
	info := `"info":{"path":"%s","name":"%s","type":"file","size":1,"mode":420,"mtime_ns":1}`
	for _, tc := range []struct {
		name, script string
	}{
		{"huge frame", `printf '\377\377\377\377'; sleep 30`},
		{"not JSON", frameScript("sleep 30", "not json at all")},
		{"unknown field", frameScript("sleep 30", `{"id":1,"error":{"code":"not_found"},"shell":"sh"}`)},
		{"wrong id", frameScript("sleep 30", `{"id":2,"error":{"code":"not_found"}}`)},
		{"outside path", frameScript("sleep 30", `{"id":1,`+fmt.Sprintf(info, "/etc/passwd", "passwd")+`,"data":"YQ=="}`)},
		{"unknown code", frameScript("sleep 30", `{"id":1,"error":{"code":"ok, run rm -rf /"}}`)},
		{"silent", "sleep 30"},
		{"half a frame", `printf '\000\000\001\000{"id"'; sleep 30`},
		{"dies", "exit 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb, f := newFilesSandbox(t, moat.Config{}, nil)
			f.mu.Lock()
			f.stop()
			f.exe, f.args, f.timeout = "/bin/sh", []string{"-c", tc.script}, 500*time.Millisecond
			f.mu.Unlock()
			start := time.Now()
			data, info, err := f.Read(sb.WorkDir()+"/a", 0)
			if codeOf(err) != CodeInternal || data != nil || info != (FileInfo{}) {
				t.Errorf("Read: %q %+v %v; want %s", data, info, err, CodeInternal)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %v", d)
			}
			f.mu.Lock()
			if f.srv != nil {
				t.Errorf("the server was kept")
			}
			f.mu.Unlock()
		})
	}
}
