package agent

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"testing"
)

// The JSON of every event is written down once, in docs/events.md (LOOP-1);
// this test keeps it true: each example decodes into Event and encodes back
// to the same bytes, and every event type has an example.
func TestEventsDoc(t *testing.T) {
	doc, err := os.ReadFile("../docs/events.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```json\n(.*?)\n```").FindAllSubmatch(doc, -1)
	seen := map[EventType]bool{}
	for _, b := range blocks {
		var e Event
		dec := json.NewDecoder(bytes.NewReader(b[1]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			t.Errorf("example does not decode: %v\n%s", err, b[1])
			continue
		}
		out, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, b[1]) {
			t.Errorf("example does not round-trip:\n doc: %s\ncode: %s", b[1], out)
		}
		seen[e.Type] = true
	}
	for _, typ := range []EventType{EventRunStart, EventTextDelta, EventThinkingDelta, EventToolStart, EventToolEnd,
		EventPermissionRequest, EventPermissionDecision, EventCompaction, EventRetry, EventUsage, EventError,
		EventMessage, EventDone, EventSubagentStart, EventSubagentEnd, EventQuestion} {
		if !seen[typ] {
			t.Errorf("docs/events.md has no example of %s", typ)
		}
	}
}
