package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/eventbus"
)

// API-2, issue 30: a burst of events waiting for a stream — more than one
// write's worth — arrives whole and in order, one frame per event, with
// events that cannot be framed (a type with a line break: attack rows a
// hostile producer might publish) left out and multi-line data on one
// line.
func TestEventsBurst_API2(t *testing.T) {
	e := newEnvBus(t, eventbus.Options{Buffer: 1 << 12})
	f := e.fixture(t, "ada")
	s := e.events(t, f.session, f.tok, "")
	const n = 400
	pad := strings.Repeat("x", 200) // 400 × ~300 B: several 32 KiB writes
	var want []int64
	for i := int64(1); i <= n; i++ {
		typ, data := "text_delta", fmt.Sprintf(`{"type":"text_delta","text":"%d %s"}`, i, pad)
		switch i % 50 {
		case 7:
			typ = "text_delta\nevent: done" // would forge a frame
		case 8:
			typ = "x\r\ndata: {}"
		case 9:
			data = "{\n\"type\": \"text_delta\"}"
		}
		if err := e.bus.Publish(bg, eventbus.Event{SessionID: f.session, ID: i, Type: typ, Data: []byte(data)}); err != nil {
			t.Fatal(err)
		}
		if !strings.ContainsAny(typ, "\r\n") {
			want = append(want, i)
		}
	}
	got := s.nextEvents(t, len(want))
	for i, fr := range got {
		if fr.ID != want[i] || fr.Event != "text_delta" {
			t.Fatalf("frame %d: id %d event %q, want id %d text_delta", i, fr.ID, fr.Event, want[i])
		}
		if fr.ID%50 == 9 && fr.Data != `{"type":"text_delta"}` {
			t.Errorf("frame %d: multi-line data sent as %q", fr.ID, fr.Data)
		}
	}
	// Nothing after the last: the next frame is a later event.
	if err := e.bus.Publish(bg, eventbus.Event{SessionID: f.session, ID: n + 1, Type: "text_delta", Data: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if fr := s.nextEvents(t, 1)[0]; fr.ID != n+1 {
		t.Errorf("after the burst: id %d, want %d", fr.ID, n+1)
	}
}
