package serve

import (
	"net/http"
	"os"
	"strconv"

	"github.com/moat-sandbox/moat/internal/session"
)

// maxListEntries is what session.List returns at most.
const maxListEntries = 10000

// defaultReadMax is what a file read returns when max is not given.
const defaultReadMax = 1 << 20

func queryPath(r *http.Request) (string, error) {
	p := r.URL.Query().Get("path")
	if p == "" {
		return "", errf(session.CodeBadRequest, `the query parameter "path" is missing`)
	}
	return p, nil
}

func (s *Server) readFile(w http.ResponseWriter, r *http.Request) {
	sess := s.session(w, r)
	if sess == nil {
		return
	}
	p, err := queryPath(r)
	if err != nil {
		writeError(w, err)
		return
	}
	max := int64(defaultReadMax)
	if v := r.URL.Query().Get("max"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > maxFileContent {
			writeError(w, errf(session.CodeBadRequest, "max "+strconv.Quote(trimmed(v))+": want an integer from 0 to 16777216"))
			return
		}
		max = n
	}
	data, info, err := sess.ReadFile(p, max)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, fileRead{Info: info, Content: data, Truncated: int64(len(data)) < info.Size})
}

func (s *Server) writeFile(w http.ResponseWriter, r *http.Request) {
	sess := s.session(w, r)
	if sess == nil {
		return
	}
	var req fileWrite
	if err := decodeBody(w, r, fileBodyLimit, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.Path == "" || req.Content == nil {
		writeError(w, errf(session.CodeBadRequest, `"path" and "content" are required`))
		return
	}
	if len(*req.Content) > maxFileContent {
		writeError(w, errf(session.CodeTooLarge, "the content is over 16 MiB"))
		return
	}
	mode := os.FileMode(0o644)
	if req.Mode != "" {
		m, err := strconv.ParseUint(req.Mode, 8, 32)
		if err != nil || m > 0o777 {
			writeError(w, errf(session.CodeBadRequest, "mode "+strconv.Quote(trimmed(req.Mode))+": want octal permission bits like \"0644\""))
			return
		}
		mode = os.FileMode(m)
	}
	info, err := sess.WriteFile(req.Path, *req.Content, mode)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, info)
}

func (s *Server) listFiles(w http.ResponseWriter, r *http.Request) {
	sess := s.session(w, r)
	if sess == nil {
		return
	}
	p := r.URL.Query().Get("path")
	if p == "" {
		p = "."
	}
	l, err := sess.List(p)
	if err != nil {
		writeError(w, err)
		return
	}
	if l == nil {
		l = []session.FileInfo{}
	}
	writeJSON(w, http.StatusOK, fileList{Entries: l, Truncated: len(l) >= maxListEntries})
}

func (s *Server) statFile(w http.ResponseWriter, r *http.Request) {
	sess := s.session(w, r)
	if sess == nil {
		return
	}
	p, err := queryPath(r)
	if err != nil {
		writeError(w, err)
		return
	}
	info, err := sess.Stat(p)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, info)
}
