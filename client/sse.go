package client

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// Event is one event of a session's stream.
type Event struct {
	// ID is the event's id; a reconnection resumes after it.
	ID int64
	// Type is the event's type: the agent event types of docs/events.md
	// ("text_delta", "tool_end", "done", …), or "message" when the server
	// named none (the SSE default).
	Type string
	// Data is the event's data as sent: the agent event's JSON.
	Data json.RawMessage
}

// MaxEventSize bounds one line of an event stream; a longer one ends the
// stream with [ErrEventTooLarge].
const MaxEventSize = 16 << 20

// ErrEventTooLarge reports a stream line longer than [MaxEventSize].
var ErrEventTooLarge = fmt.Errorf("client: event stream line longer than %d bytes", MaxEventSize)

// frame is one dispatched SSE event.
type frame struct {
	id    int64
	hasID bool // the event carried a valid id field
	typ   string
	data  []byte
}

// sseReader parses the text/event-stream format (the WHATWG HTML
// standard, "server-sent events"): lines ended by CR, LF or CRLF; comment
// lines starting with ':'; fields data (lines joined with LF), event, id
// and retry; an event dispatched by a blank line when it has data. rein's
// ids are integers: an id field that is not one (or is empty) is ignored,
// so a resumption point is never lost.
type sseReader struct {
	sc *bufio.Scanner
	// lines counts the lines read, comments and heartbeats included: a
	// sign of life of the connection.
	lines int
	// retry is the last retry field: the server's reconnection delay.
	retry time.Duration
	// lastID is the id of the latest event that had one.
	lastID int64
}

func newSSEReader(r io.Reader) *sseReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxEventSize)
	sc.Split(lineSplitter())
	return &sseReader{sc: sc}
}

// lineSplitter returns a bufio.SplitFunc for SSE lines: each ends at CR,
// LF or CRLF. A CR ends its line at once — a live stream must not wait for
// the next byte — and a LF right after it is then skipped along with the
// next line. The state changes only with input consumed, and no call
// returns a nil token with input left (the Scanner would stop at EOF).
func lineSplitter() bufio.SplitFunc {
	afterCR := false
	return func(data []byte, atEOF bool) (int, []byte, error) {
		skip := 0
		if afterCR && len(data) > 0 && data[0] == '\n' {
			skip = 1
		}
		rest := data[skip:]
		if i := bytes.IndexAny(rest, "\r\n"); i >= 0 {
			afterCR = rest[i] == '\r'
			return skip + i + 1, rest[:i], nil
		}
		if atEOF && len(data) > 0 {
			afterCR = false
			if len(rest) == 0 {
				return len(data), nil, nil // only the LF of a CRLF was left
			}
			return len(data), rest, nil
		}
		return 0, nil, nil
	}
}

// next returns the next event. At the end of the input it returns io.EOF
// (an event not finished by a blank line is dropped, as the standard
// says); a line longer than MaxEventSize is ErrEventTooLarge.
func (r *sseReader) next() (frame, error) {
	var (
		f       frame
		data    []byte
		hasData bool
	)
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if r.lines == 0 {
			line = bytes.TrimPrefix(line, []byte("\uFEFF"))
		}
		r.lines++
		if len(line) == 0 {
			if !hasData {
				f = frame{} // nothing to dispatch; the type resets
				continue
			}
			f.data = data[:len(data)-1] // drop the last LF
			if f.typ == "" {
				f.typ = "message"
			}
			if f.hasID {
				r.lastID = f.id
			} else {
				f.id = r.lastID
			}
			return f, nil
		}
		if line[0] == ':' {
			continue // a comment: heartbeats
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			data = append(append(data, value...), '\n')
			hasData = true
		case "event":
			f.typ = string(value)
		case "id":
			if id, err := strconv.ParseInt(string(value), 10, 64); err == nil && id >= 0 {
				f.id, f.hasID = id, true
			}
		case "retry":
			if ms, err := strconv.ParseUint(string(value), 10, 32); err == nil {
				r.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return frame{}, ErrEventTooLarge
		}
		return frame{}, err
	}
	return frame{}, io.EOF
}
