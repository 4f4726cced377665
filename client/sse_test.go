package client

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// parsed is what the parser made of a whole input.
type parsed struct {
	Events []frame
	Retry  time.Duration
	Err    error
}

// parseAll reads every event of r.
func parseAll(r io.Reader) parsed {
	sr := newSSEReader(r)
	var p parsed
	for {
		f, err := sr.next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				p.Err = err
			}
			p.Retry = sr.retry
			return p
		}
		p.Events = append(p.Events, f)
	}
}

var frameCmp = cmp.AllowUnexported(frame{})

func TestSSEReader(t *testing.T) {
	ev := func(id int64, hasID bool, typ, data string) frame {
		return frame{id: id, hasID: hasID, typ: typ, data: []byte(data)}
	}
	tests := []struct {
		name string
		in   string
		want parsed
	}{{
		name: "rein's framing",
		in:   "id: 1048576\nevent: message\ndata: {\"type\":\"message\"}\n\nid: 1048577\nevent: text_delta\ndata: {\"text\":\"hi\"}\n\n",
		want: parsed{Events: []frame{ev(1048576, true, "message", `{"type":"message"}`), ev(1048577, true, "text_delta", `{"text":"hi"}`)}},
	}, {
		name: "heartbeats and comments",
		in:   ": ping\n\n:\n\nid: 2\nevent: done\n: inside an event\ndata: {}\n\n: ping\n\n",
		want: parsed{Events: []frame{ev(2, true, "done", `{}`)}},
	}, {
		name: "multi-line data",
		in:   "id: 3\ndata: {\"a\":\ndata:  1}\ndata\n\n",
		want: parsed{Events: []frame{ev(3, true, "message", "{\"a\":\n 1}\n")}},
	}, {
		name: "CRLF",
		in:   "id: 4\r\nevent: x\r\ndata: a\r\ndata: b\r\n\r\n",
		want: parsed{Events: []frame{ev(4, true, "x", "a\nb")}},
	}, {
		name: "CR",
		in:   "id: 5\revent: x\rdata: a\r\rdata: b\r\r",
		want: parsed{Events: []frame{ev(5, true, "x", "a"), ev(5, false, "message", "b")}},
	}, {
		name: "BOM, no space after the colon",
		in:   "\uFEFFid:6\nevent:y\ndata:z\n\n",
		want: parsed{Events: []frame{ev(6, true, "y", "z")}},
	}, {
		name: "an event without data is not dispatched; its type does not leak",
		in:   "id: 7\nevent: lonely\n\ndata: d\n\n",
		want: parsed{Events: []frame{ev(0, false, "message", "d")}},
	}, {
		name: "ids that are not integers are ignored",
		in:   "id: 8\ndata: a\n\nid: x9\ndata: b\n\nid:\ndata: c\n\nid: -3\ndata: d\n\n",
		want: parsed{Events: []frame{ev(8, true, "message", "a"), ev(8, false, "message", "b"), ev(8, false, "message", "c"), ev(8, false, "message", "d")}},
	}, {
		name: "an unfinished event is dropped",
		in:   "id: 10\ndata: a\n\nid: 11\nevent: cut\ndata: {\"half",
		want: parsed{Events: []frame{ev(10, true, "message", "a")}},
	}, {
		name: "retry and unknown fields",
		in:   "retry: 1500\nfoo: bar\ndata: a\n\nretry: soon\n",
		want: parsed{Events: []frame{ev(0, false, "message", "a")}, Retry: 1500 * time.Millisecond},
	}, {
		name: "empty data",
		in:   "data:\n\n",
		want: parsed{Events: []frame{ev(0, false, "message", "")}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, parseAll(strings.NewReader(tt.in)), frameCmp); diff != "" {
				t.Errorf("whole input (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, parseAll(iotest.OneByteReader(strings.NewReader(tt.in))), frameCmp); diff != "" {
				t.Errorf("one byte at a time (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSSEReaderTooLong(t *testing.T) {
	in := "data: " + strings.Repeat("x", MaxEventSize) + "\n\n"
	if got := parseAll(strings.NewReader(in)); !errors.Is(got.Err, ErrEventTooLarge) {
		t.Errorf("error %v, want ErrEventTooLarge", got.Err)
	}
}

// encode writes frames back in the SSE format.
func encode(fs []frame) string {
	var b strings.Builder
	for _, f := range fs {
		if f.hasID {
			fmt.Fprintf(&b, "id: %d\n", f.id)
		}
		fmt.Fprintf(&b, "event: %s\n", f.typ)
		for line := range strings.SplitSeq(string(f.data), "\n") {
			fmt.Fprintf(&b, "data: %s\n", line)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// FuzzSSEReader: any input parses without panic, the same whether read
// whole or a byte at a time, into events that hold no CR and that survive
// being written out and read again.
func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{
		"id: 1\nevent: message\ndata: {}\n\n",
		": ping\n\nid: 2\r\ndata: a\r\ndata: b\r\n\r\n",
		"id:3\rdata:x\r\r",
		"\uFEFFretry: 10\nid: 9\ndata\n\n",
		"data: half",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		whole := parseAll(strings.NewReader(in))
		bytewise := parseAll(iotest.OneByteReader(strings.NewReader(in)))
		if diff := cmp.Diff(whole, bytewise, frameCmp); diff != "" {
			t.Fatalf("whole and byte-wise parses differ (-whole +bytewise):\n%s", diff)
		}
		if whole.Err != nil {
			return
		}
		last := int64(0)
		for i, f := range whole.Events {
			if strings.ContainsAny(f.typ, "\r\n") || strings.ContainsRune(string(f.data), '\r') {
				t.Fatalf("event %d holds a line break: %+v", i, f)
			}
			if f.hasID {
				last = f.id
			} else if f.id != last {
				t.Fatalf("event %d without id has id %d, want the last id %d", i, f.id, last)
			}
		}
		again := parseAll(strings.NewReader(encode(whole.Events)))
		if diff := cmp.Diff(whole.Events, again.Events, frameCmp); diff != "" {
			t.Fatalf("re-encoded events differ (-first +again):\n%s", diff)
		}
	})
}
