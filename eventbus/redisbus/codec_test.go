package redisbus

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/reinhq/rein/eventbus"
)

func TestCodecRoundTrip(t *testing.T) {
	tests := []eventbus.Event{
		{SessionID: "s", ID: 1},
		{SessionID: "s", ID: 1<<20 | 7, RunID: "run-1", Type: "text_delta", Data: []byte(`{"text":"hé"}`)},
		{SessionID: "s", ID: math.MaxInt64, Type: "message", Durable: true, Data: []byte{}},
		{SessionID: "s", ID: 300, RunID: strings.Repeat("r", 300), Data: []byte("a b\x00c")},
	}
	for _, e := range tests {
		for _, prev := range []string{"0", "12-0"} {
			got, ev, err := decode("s", prev+" "+string(encode(&e)))
			if err != nil {
				t.Fatalf("decode(encode(%+v)): %v", e, err)
			}
			if want, _ := parseStreamID(prev); got != want {
				t.Errorf("prev = %d, want %d", got, want)
			}
			if diff := cmp.Diff(e, *ev); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	good := string(encode(&eventbus.Event{SessionID: "s", ID: 5, RunID: "r", Type: "t", Data: []byte("{}")}))
	for _, msg := range []string{
		"",
		"0",
		"x " + good,
		"1-1 " + good,
		"-1 " + good,
		"0 ",
		"0 \x02" + good[1:],
		"0 " + good[:3],
		"0 \x01\x00\x00\x00\x00", // id 0
		"0 \x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x00\x00\x00", // id overflows int64
		"0 \x01\x05\x00\x00\x00data",                                 // data without its flag
	} {
		if _, _, err := decode("s", msg); !errors.Is(err, errCorrupt) {
			t.Errorf("decode(%q) = %v, want errCorrupt", msg, err)
		}
	}
	if _, _, err := entryEvent("s", redis.XMessage{ID: "6-0", Values: map[string]any{"m": "0 " + good}}); !errors.Is(err, errCorrupt) {
		t.Errorf("an entry whose ID is not its event's: %v, want errCorrupt", err)
	}
	if _, _, err := entryEvent("s", redis.XMessage{ID: "5-0", Values: map[string]any{}}); !errors.Is(err, errCorrupt) {
		t.Errorf("an entry without its field: %v, want errCorrupt", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add("0 " + string(encode(&eventbus.Event{SessionID: "s", ID: 5, RunID: "r", Type: "t", Data: []byte("{}")})))
	f.Add("7-0 " + string(encode(&eventbus.Event{SessionID: "s", ID: 8, Durable: true})))
	f.Add("0 \x01\x80")
	f.Fuzz(func(t *testing.T, msg string) {
		prev, ev, err := decode("s", msg)
		if err != nil {
			return
		}
		if ev.ID <= 0 || prev < 0 {
			t.Fatalf("decode(%q) = %d, %+v: ids must be positive", msg, prev, ev)
		}
		// What decodes re-encodes to an equivalent message.
		prev2, ev2, err := decode("s", streamID(prev)+" "+string(encode(ev)))
		if err != nil || prev2 != prev || !cmp.Equal(ev, ev2) {
			t.Fatalf("re-encoding %+v: %d, %+v, %v", ev, prev2, ev2, err)
		}
	})
}
