package jsonevents

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

type event struct{ Type, Data string }

func readAll(r *Reader) []event {
	var out []event
	for r.Next() {
		out = append(out, event{r.Type(), string(r.Data())})
	}
	return out
}

// TestReaderPROV2 checks the event framing every adapter shares (SPEC
// PROV-2), the shapes servers and proxies were seen to send included: a
// byte-order mark before the first event, keep-alive events with empty
// data, comments, CRLF, data over several lines, a last event without its
// blank line.
func TestReaderPROV2(t *testing.T) {
	long := strings.Repeat("x", 20000)
	cases := []struct {
		name, body string
		want       []event
	}{
		{"plain", "data: {\"a\":1}\n\ndata: {\"a\":2}\n\n", []event{{"", `{"a":1}`}, {"", `{"a":2}`}}},
		{"byte-order mark", "\xEF\xBB\xBFdata: {\"a\":1}\n\n", []event{{"", `{"a":1}`}}},
		{"byte-order mark before a named event", "\xEF\xBB\xBFevent: message_start\ndata: {}\n\n", []event{{"message_start", `{}`}}},
		{"byte-order mark only at the start", "data: 1\n\n\xEF\xBB\xBFdata: 2\n\n", []event{{"", "1"}}},
		{"keep-alives", "data:\n\ndata: \n\ndata: {\"a\":1}\n\ndata:  \r\n\r\nevent: ping\ndata:\n\n", []event{{"", `{"a":1}`}}},
		{"event without data", "event: ping\n\nevent: x\ndata: 1\n\n", []event{{"x", "1"}}},
		{"a name does not outlive its event", "event: a\ndata: 1\n\ndata: 2\n\n", []event{{"a", "1"}, {"", "2"}}},
		{"comments, id and retry", ": hi\r\nid: 7\r\nretry: 10\r\ndata:1\r\n\r\n", []event{{"", "1"}}},
		{"data over lines", "data: a\ndata: b\n\n", []event{{"", "a\nb"}}},
		{"field without colon", "data\ndata: x\n\n", []event{{"", "\nx"}}},
		{"long line", "data: " + long + "\n\n", []event{{"", long}}},
		{"no blank line at the end", "data: 1\n\ndata: [DONE]", []event{{"", "1"}, {"", "[DONE]"}}},
		{"empty", "", nil},
		{"only a mark", "\xEF\xBB", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(c.body))
			if diff := cmp.Diff(c.want, readAll(r)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if r.Err() != nil || r.Next() {
				t.Errorf("after the end: err %v", r.Err())
			}
			// Byte by byte, the same events.
			r = NewReader(iotest.OneByteReader(strings.NewReader(c.body)))
			if diff := cmp.Diff(c.want, readAll(r)); diff != "" {
				t.Errorf("one byte at a time (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReaderErrors: an event cut by a read error is not an event; the
// error is kept.
func TestReaderErrors(t *testing.T) {
	boom := errors.New("connection reset")
	r := NewReader(io.MultiReader(strings.NewReader("data: 1\n\ndata: {\"cut"), iotest.ErrReader(boom)))
	if got := readAll(r); len(got) != 1 || !errors.Is(r.Err(), boom) {
		t.Errorf("events %v, err %v; want one event and the read error", got, r.Err())
	}
	defer func(n int) { maxEvent = n }(maxEvent)
	maxEvent = 1 << 16
	for _, body := range []string{
		"data: " + strings.Repeat("x", maxEvent) + "\n\n",                               // one line
		strings.Repeat("data: "+strings.Repeat("x", 1000)+"\n", maxEvent/1000+1) + "\n", // many
	} {
		r = NewReader(strings.NewReader(body))
		if r.Next() || !errors.Is(r.Err(), ErrEventTooLarge) {
			t.Errorf("oversized event: err %v", r.Err())
		}
	}
}

// TestReaderNamesInterned: a repeated event name costs no allocation.
func TestReaderNamesInterned(t *testing.T) {
	body := []byte(strings.Repeat("event: response.output_text.delta\ndata: {}\n\n", 100))
	r := NewReader(bytes.NewReader(body))
	r.Next()
	allocs := testing.AllocsPerRun(1, func() {
		for range 50 {
			r.Next()
		}
	})
	if allocs > 0 {
		t.Errorf("%v allocations for 50 events", allocs)
	}
}

func TestTrimBOM(t *testing.T) {
	if got := string(TrimBOM([]byte("\xEF\xBB\xBF{}"))); got != "{}" {
		t.Errorf("TrimBOM = %q", got)
	}
	if got := string(TrimBOM([]byte("{}"))); got != "{}" {
		t.Errorf("TrimBOM = %q", got)
	}
}

// FuzzReader: whatever the body, the reader ends, never yields a blank
// event, and reads the same events whether the body comes whole or a byte
// at a time.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"data: {\"a\":1}\n\n",
		"\xEF\xBB\xBFdata: {\"a\":1}\n\n",
		"\xEF\xBB\xBFevent: message_start\r\ndata: {}\r\n\r\n",
		"data:\n\ndata: \n\nevent: ping\ndata:\n\n",
		": keep-alive\n\ndata: a\ndata: b\n\n",
		"data: [DONE]",
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"code\":\"insufficient_quota\"}}\n\n",
		"data\n\r\n:\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		whole := readAll(NewReader(bytes.NewReader(body)))
		for _, e := range whole {
			if strings.Trim(e.Data, " \t\r\n") == "" {
				t.Fatalf("blank event %q", e)
			}
		}
		if diff := cmp.Diff(whole, readAll(NewReader(iotest.OneByteReader(bytes.NewReader(body))))); diff != "" {
			t.Fatalf("byte by byte (-whole +bytes):\n%s", diff)
		}
	})
}

func BenchmarkReader(b *testing.B) {
	body := []byte(strings.Repeat("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"abcd\"}\n\n", 200))
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		r := NewReader(bytes.NewReader(body))
		for r.Next() {
		}
	}
}
