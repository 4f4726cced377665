package mockserver

import (
	"net"
	"net/http"
	"time"
	"unicode/utf8"
)

// replyWriter writes a reply's events and applies the turn's stream faults:
// delay, reset after N events, malformed data, a cut before the final event,
// a byte-order mark, keep-alive events.
type replyWriter struct {
	w      http.ResponseWriter
	fault  *Fault
	events int
	broken bool // the connection was reset: write nothing more
	begun  bool
}

// begin writes the headers of a stream.
func (rw *replyWriter) begin(contentType string) {
	if rw.begun {
		return
	}
	rw.begun = true
	rw.w.Header().Set("Content-Type", contentType)
	rw.w.Header().Set("Cache-Control", "no-cache")
	rw.w.WriteHeader(http.StatusOK)
	rw.bom()
	flush(rw.w)
}

// bom writes a byte-order mark when the fault asks for one.
func (rw *replyWriter) bom() {
	if rw.fault != nil && rw.fault.BOM {
		_, _ = rw.w.Write([]byte("\xEF\xBB\xBF"))
	}
}

// keepAlives are the empty-data events KeepAlive sends, in turn: with and
// without the space after the colon.
var keepAlives = [2]string{"data:\n\n", "data: \n\n"}

// SSE writes one server-sent event ("event:" is omitted when name is empty)
// and reports whether the stream is still open.
func (rw *replyWriter) SSE(name string, data any) bool {
	if rw.broken {
		return false
	}
	rw.begin("text/event-stream")
	f := rw.fault
	if f != nil && f.EventDelay > 0 {
		time.Sleep(f.EventDelay)
	}
	if f != nil && f.ResetAfterEvents > 0 && rw.events >= f.ResetAfterEvents {
		resetConn(rw.w)
		rw.broken = true
		return false
	}
	buf := make([]byte, 0, 256)
	if f != nil && f.KeepAlive {
		buf = append(buf, keepAlives[rw.events%2]...)
	}
	if name != "" {
		buf = append(buf, "event: "...)
		buf = append(buf, name...)
		buf = append(buf, '\n')
	}
	buf = append(buf, "data: "...)
	switch d := data.(type) {
	case string:
		buf = append(buf, d...)
	case []byte:
		buf = append(buf, d...)
	default:
		buf = append(buf, mustJSON(d)...)
	}
	buf = append(buf, '\n', '\n')
	if _, err := rw.w.Write(buf); err != nil {
		rw.broken = true
		return false
	}
	rw.events++
	if f != nil && f.Malformed && rw.events == 1 {
		_, _ = rw.w.Write([]byte("data: {\"oops\": this is not json\n\n"))
	}
	flush(rw.w)
	return true
}

// Final writes a stream's final event, unless the fault cuts it.
func (rw *replyWriter) Final(name string, data any) bool {
	if rw.fault != nil && rw.fault.CutBeforeFinal {
		return false
	}
	return rw.SSE(name, data)
}

// Cut reports whether the turn's fault cuts the stream before its final
// events (for vendors whose end is spread over several events).
func (rw *replyWriter) Cut() bool { return rw.fault != nil && rw.fault.CutBeforeFinal }

// JSON writes a plain, non-streamed reply.
func (rw *replyWriter) JSON(v any) {
	if rw.fault != nil && (rw.fault.ResetAfterEvents > 0 || rw.fault.CutBeforeFinal) {
		// A plain reply has one "event": cut it in the middle.
		body := mustJSON(v)
		rw.w.Header().Set("Content-Type", "application/json")
		rw.w.WriteHeader(http.StatusOK)
		_, _ = rw.w.Write(body[:len(body)/2])
		flush(rw.w)
		resetConn(rw.w)
		return
	}
	rw.w.Header().Set("Content-Type", "application/json")
	rw.w.WriteHeader(http.StatusOK)
	rw.bom()
	_, _ = rw.w.Write(mustJSON(v))
}

func flush(w http.ResponseWriter) {
	_ = http.NewResponseController(w).Flush()
}

// resetConn closes the connection with a TCP RST (SO_LINGER 0).
func resetConn(w http.ResponseWriter) {
	flush(w)
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	if buf != nil {
		_ = buf.Flush()
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

func decodeRune(s string) (rune, int) { return utf8.DecodeRuneInString(s) }
