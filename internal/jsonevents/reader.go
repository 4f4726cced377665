package jsonevents

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// bom is the UTF-8 byte-order mark, which a stream may begin with.
var bom = []byte("\xEF\xBB\xBF")

// maxEvent bounds the size of one event's data (and of one line), 64 MiB: a
// body that exceeds it fails with [ErrEventTooLarge] rather than exhaust
// memory. A variable for the tests.
var maxEvent = 64 << 20

// ErrEventTooLarge is the error of a stream with an event or a line larger
// than 64 MiB.
var ErrEventTooLarge = errors.New("jsonevents: server-sent event larger than 64 MiB")

// maxNames bounds how many distinct event names a Reader keeps interned.
const maxNames = 64

// Reader reads the events of a text/event-stream body, as the WHATWG
// server-sent events format defines them, for every vendor adapter:
//
//   - a UTF-8 byte-order mark at the start of the body is skipped;
//   - lines end in LF or CRLF; a blank line ends an event;
//   - "data" lines are joined with LF, "event" names the event, comments
//     (lines starting with ':') and other fields (id, retry) are skipped;
//   - an event whose data is empty or white space — a keep-alive some
//     proxies send — is skipped, as is an event with no data at all;
//   - the event a body ends in without its blank line still counts; one cut
//     by a read error does not.
//
// The zero value is not usable; make one with [NewReader].
type Reader struct {
	r     *bufio.Reader
	typ   string            // the current event's name
	data  []byte            // the current event's data; reused
	long  []byte            // a line longer than r's buffer; reused
	names map[string]string // event names seen, so a name repeated costs nothing
	err   error             // the read error that ended the body, if not io.EOF
	begun bool              // the byte-order mark was looked for
}

// NewReader returns a Reader of body.
func NewReader(body io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(body, 8<<10)}
}

// Next reads the next event that carries data and reports whether there is
// one: false at the end of the body or after a read error ([Reader.Err]).
func (s *Reader) Next() bool {
	if s.err != nil {
		return false
	}
	if !s.begun {
		s.begun = true
		if b, _ := s.r.Peek(len(bom)); bytes.Equal(b, bom) {
			_, _ = s.r.Discard(len(bom))
		}
	}
	s.data, s.typ = s.data[:0], ""
	has := false
	for {
		line, err := s.line()
		if len(line) == 0 && err == nil { // a blank line ends the event
			if has && !whiteSpace(s.data) {
				return true
			}
			s.data, s.typ, has = s.data[:0], "", false
			continue
		}
		if !s.field(line, &has) {
			return false
		}
		if err != nil {
			if err != io.EOF {
				s.err = err
				return false
			}
			return has && !whiteSpace(s.data)
		}
	}
}

// Type returns the current event's name ("event:" field), "" when it has
// none.
func (s *Reader) Type() string { return s.typ }

// Data returns the current event's data, valid until the next call to Next.
func (s *Reader) Data() []byte { return s.data }

// Err returns the read error that ended the body, nil at a clean end.
func (s *Reader) Err() error { return s.err }

// field applies one line of an event; false means the event is too large.
func (s *Reader) field(line []byte, has *bool) bool {
	name, value, found := bytes.Cut(line, []byte(":"))
	if found && len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	switch string(name) {
	case "data":
		if len(s.data)+len(value)+1 > maxEvent {
			s.err = ErrEventTooLarge
			return false
		}
		if *has {
			s.data = append(s.data, '\n')
		}
		s.data, *has = append(s.data, value...), true
	case "event":
		s.typ = s.intern(value)
	}
	return true
}

// intern returns name as a string, allocated once per distinct name.
func (s *Reader) intern(name []byte) string {
	if n, ok := s.names[string(name)]; ok {
		return n
	}
	n := string(name)
	if s.names == nil {
		s.names = make(map[string]string)
	}
	if len(s.names) < maxNames {
		s.names[n] = n
	}
	return n
}

// line reads one line without its end.
func (s *Reader) line() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		s.long = append(s.long[:0], line...)
		for err == bufio.ErrBufferFull {
			if len(s.long) > maxEvent {
				return nil, ErrEventTooLarge
			}
			line, err = s.r.ReadSlice('\n')
			s.long = append(s.long, line...)
		}
		line = s.long
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), err
}

// whiteSpace reports whether b is empty or JSON white space only.
func whiteSpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// TrimBOM returns body without a leading UTF-8 byte-order mark: for a whole
// JSON reply read at once.
func TrimBOM(body []byte) []byte { return bytes.TrimPrefix(body, bom) }
