package serve

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"
)

// stream writes events as NDJSON, or as server-sent events when the
// request's Accept asks for text/event-stream, flushing each. A write that
// fails or takes longer than writeTime cancels the request's work.
type stream struct {
	mu     sync.Mutex
	w      http.ResponseWriter
	rc     *http.ResponseController
	sse    bool
	broken bool
	cancel func()
}

func newStream(w http.ResponseWriter, r *http.Request, cancel func()) *stream {
	sse := strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	ct := "application/x-ndjson"
	if sse {
		ct = "text/event-stream"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	st := &stream{w: w, rc: http.NewResponseController(w), sse: sse, cancel: cancel}
	_ = st.rc.SetWriteDeadline(time.Now().Add(writeTime))
	w.WriteHeader(http.StatusOK)
	if st.rc.Flush() != nil {
		st.fail()
	}
	return st
}

func (st *stream) fail() {
	st.broken = true
	st.cancel()
}

// send writes one event; after a failed write it does nothing.
func (st *stream) send(ev streamEvent) {
	data, err := json.Marshal(ev)
	if err != nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.broken {
		return
	}
	var line []byte
	if st.sse {
		line = append(append(append([]byte("event: "+ev.Type+"\ndata: "), data...), '\n'), '\n')
	} else {
		line = append(data, '\n')
	}
	_ = st.rc.SetWriteDeadline(time.Now().Add(writeTime))
	if _, err := st.w.Write(line); err != nil {
		st.fail()
		return
	}
	if err := st.rc.Flush(); err != nil {
		st.fail()
	}
}
