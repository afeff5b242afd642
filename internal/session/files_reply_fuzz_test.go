package session

import (
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/fileserve"
	"github.com/moat-sandbox/moat/internal/paths"
)

var fuzzCfg = fileserve.Config{WorkDir: "/w", Places: []fileserve.Place{{Path: "/w", Writable: true}, {Path: "/g"}},
	MaxFileBytes: 1 << 10, MaxReadBytes: 1 << 10, MaxEntries: 4}

// FuzzCheckReply: whatever a hostile server sends, a reply checkReply
// accepts keeps every promise the API makes of it.
func FuzzCheckReply(f *testing.F) {
	for _, s := range []string{
		`{"id":7,"info":{"path":"/w/a","name":"a","type":"file","size":3,"mode":420,"mtime_ns":1},"data":"YWJj"}`,
		`{"id":7,"entries":[{"path":"/w/l","name":"l","type":"symlink","size":3,"mode":511,"mtime_ns":1,"target":"/etc"}],"truncated":true}`,
		`{"id":7,"error":{"code":"not_regular_file","kind":"fifo"}}`,
		`{"id":7,"error":{"code":"path_refused","errno":18}}`,
		`{"id":7,"info":{"path":"/etc/passwd","name":"passwd","type":"file","size":3,"mode":420,"mtime_ns":1}}`,
		`{"id":8}`,
	} {
		for _, op := range []string{"read", "write", "list", "stat"} {
			f.Add(op, int64(3), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, op string, max int64, b []byte) {
		req := fileserve.Request{ID: 7, Op: op, Path: "x", Max: max}
		rep, err := checkReply(b, req, fuzzCfg)
		if err != nil {
			return
		}
		if rep.ID != 7 {
			t.Fatalf("id %d", rep.ID)
		}
		if rep.Error != nil {
			e := faultError(req, rep.Error, fuzzCfg)
			if e.Code == "" || strings.ContainsAny(e.Message, "\x00") {
				t.Fatalf("fault %+v -> %+v", rep.Error, e)
			}
			return
		}
		infos := rep.Entries
		if rep.Info != nil {
			infos = append(infos, *rep.Info)
		}
		switch op {
		case "read":
			if int64(len(rep.Data)) > max || rep.Info == nil || rep.Info.Type != "file" {
				t.Fatalf("read reply %+v", rep)
			}
		case "list":
			if len(rep.Entries) > fuzzCfg.MaxEntries || rep.Info != nil {
				t.Fatalf("list reply %+v", rep)
			}
		case "write", "stat":
			if rep.Info == nil || rep.Data != nil {
				t.Fatalf("%s reply %+v", op, rep)
			}
		default:
			t.Fatalf("an unknown op's reply passed: %+v", rep)
		}
		for _, in := range infos {
			fi := fileInfo(in)
			if !paths.UnderAny(fi.Path, []string{"/w", "/g"}) || !fileserve.ValidType(fi.Type) || len(fi.Mode) != 4 && len(fi.Mode) != 5 {
				t.Fatalf("info %+v", fi)
			}
			if fi.Target != "" && fi.Type != "symlink" {
				t.Fatalf("target on %+v", fi)
			}
		}
	})
}

func TestCheckReply(t *testing.T) {
	read := fileserve.Request{ID: 7, Op: "read", Path: "a", Max: 3}
	for _, tc := range []struct {
		name string
		req  fileserve.Request
		in   string
		ok   bool
	}{
		{"read", read, `{"id":7,"info":{"path":"/w/a","name":"a","type":"file","size":3,"mode":420,"mtime_ns":1},"data":"YWJj"}`, true},
		{"read past max", read, `{"id":7,"info":{"path":"/w/a","name":"a","type":"file","size":4,"mode":420,"mtime_ns":1},"data":"YWJjZA=="}`, false},
		{"wrong id", read, `{"id":6,"info":{"path":"/w/a","name":"a","type":"file","size":3,"mode":420,"mtime_ns":1}}`, false},
		{"unknown field", read, `{"id":7,"info":{"path":"/w/a","name":"a","type":"file","size":3,"mode":420,"mtime_ns":1,"uid":0}}`, false},
		{"outside", read, `{"id":7,"info":{"path":"/etc/passwd","name":"passwd","type":"file","size":3,"mode":420,"mtime_ns":1}}`, false},
		{"dotdot", read, `{"id":7,"info":{"path":"/w/../etc","name":"etc","type":"file","size":3,"mode":420,"mtime_ns":1}}`, false},
		{"name lies", read, `{"id":7,"info":{"path":"/w/a","name":"b","type":"file","size":3,"mode":420,"mtime_ns":1}}`, false},
		{"a fifo read", read, `{"id":7,"info":{"path":"/w/a","name":"a","type":"fifo","size":0,"mode":420,"mtime_ns":1}}`, false},
		{"bad type", fileserve.Request{ID: 7, Op: "stat"}, `{"id":7,"info":{"path":"/w/a","name":"a","type":"door","size":0,"mode":420,"mtime_ns":1}}`, false},
		{"setuid shown", fileserve.Request{ID: 7, Op: "stat"}, `{"id":7,"info":{"path":"/w/a","name":"a","type":"file","size":0,"mode":2541,"mtime_ns":1}}`, true},
		{"mode too big", fileserve.Request{ID: 7, Op: "stat"}, `{"id":7,"info":{"path":"/w/a","name":"a","type":"file","size":0,"mode":4096,"mtime_ns":1}}`, false},
		{"target on a file", fileserve.Request{ID: 7, Op: "stat"}, `{"id":7,"info":{"path":"/w/a","name":"a","type":"file","size":0,"mode":420,"mtime_ns":1,"target":"x"}}`, false},
		{"too many entries", fileserve.Request{ID: 7, Op: "list"}, `{"id":7,"entries":[` + strings.Repeat(`{"path":"/w/a","name":"a","type":"file","size":0,"mode":420,"mtime_ns":1},`, 4) + `{"path":"/w/a","name":"a","type":"file","size":0,"mode":420,"mtime_ns":1}]}`, false},
		{"unknown code", read, `{"id":7,"error":{"code":"root_shell"}}`, false},
		{"fault and result", read, `{"id":7,"error":{"code":"internal"},"data":"YQ=="}`, false},
		{"fault", read, `{"id":7,"error":{"code":"not_found","errno":2}}`, true},
		{"trailing", read, `{"id":7,"error":{"code":"not_found"}}{}`, false},
	} {
		if _, err := checkReply([]byte(tc.in), tc.req, fuzzCfg); (err == nil) != tc.ok {
			t.Errorf("%s: %v; want ok %v", tc.name, err, tc.ok)
		}
	}
}
