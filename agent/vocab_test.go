package agent

import (
	"encoding/json"
	"testing"
)

// The named vocabularies (ToolOutcome, Decision, Decider,
// CompactionTrigger) keep the wire format of the plain strings they
// replaced: these lines were written by the code before the types existed,
// and each must decode to its constant and encode back byte for byte
// (SPEC LOOP-1: one JSON for every consumer; stored streams stay readable).
func TestVocabularyWireFormat(t *testing.T) {
	tests := []struct {
		line string
		ok   func(Event) bool
	}{
		{`{"type":"tool_end","time":"2026-11-28T01:02:03Z","run_id":"r1","turn":2,"tool":{"id":"c1","name":"bash","output":"x","duration_ms":12,"outcome":"ok"}}`,
			func(e Event) bool { return e.Tool.Outcome == OutcomeOK }},
		{`{"type":"tool_end","time":"2026-11-28T01:02:03Z","run_id":"r1","turn":2,"tool":{"id":"c1","name":"bash","is_error":true,"output":"x","duration_ms":12,"outcome":"error"}}`,
			func(e Event) bool { return e.Tool.Outcome == OutcomeError }},
		{`{"type":"tool_end","time":"2026-11-28T01:02:03Z","run_id":"r1","turn":2,"tool":{"id":"c1","name":"bash","is_error":true,"output":"x","duration_ms":12,"outcome":"denied"}}`,
			func(e Event) bool { return e.Tool.Outcome == OutcomeDenied }},
		{`{"type":"tool_end","time":"2026-11-28T01:02:03Z","run_id":"r1","turn":2,"tool":{"id":"c1","name":"bash","is_error":true,"output":"x","duration_ms":12,"outcome":"blocked"}}`,
			func(e Event) bool { return e.Tool.Outcome == OutcomeBlocked }},
		{`{"type":"tool_end","time":"2026-11-28T01:02:03Z","run_id":"r1","turn":2,"tool":{"id":"c1","name":"bash","is_error":true,"output":"x","duration_ms":12,"outcome":"interrupted"}}`,
			func(e Event) bool { return e.Tool.Outcome == OutcomeInterrupted }},
		{`{"type":"tool_end","time":"2026-11-28T01:02:03Z","run_id":"r1","turn":2,"tool":{"id":"c1","name":"bash","is_error":true,"output":"x","duration_ms":12,"outcome":"invalid"}}`,
			func(e Event) bool { return e.Tool.Outcome == OutcomeInvalid }},
		{`{"type":"tool_end","time":"2026-11-28T01:02:03Z","run_id":"r1","turn":2,"tool":{"id":"c1","name":"bash","is_error":true,"output":"x","duration_ms":12,"outcome":"unknown_tool"}}`,
			func(e Event) bool { return e.Tool.Outcome == OutcomeUnknownTool }},
		{`{"type":"permission_decision","time":"2026-11-28T01:02:03Z","permission":{"call_id":"c1","tool":"bash","decision":"allow","by":"policy"}}`,
			func(e Event) bool { return e.Permission.Decision == Allow && e.Permission.By == ByPolicy }},
		{`{"type":"permission_decision","time":"2026-11-28T01:02:03Z","permission":{"call_id":"c1","tool":"bash","decision":"allow","by":"user","always":true}}`,
			func(e Event) bool { return e.Permission.Decision == Allow && e.Permission.By == ByUser }},
		{`{"type":"permission_decision","time":"2026-11-28T01:02:03Z","permission":{"call_id":"c1","tool":"bash","decision":"allow","by":"hook"}}`,
			func(e Event) bool { return e.Permission.Decision == Allow && e.Permission.By == ByHook }},
		{`{"type":"permission_decision","time":"2026-11-28T01:02:03Z","permission":{"call_id":"c1","tool":"bash","decision":"deny","by":"timeout"}}`,
			func(e Event) bool { return e.Permission.Decision == Deny && e.Permission.By == ByTimeout }},
		{`{"type":"permission_decision","time":"2026-11-28T01:02:03Z","permission":{"call_id":"c1","tool":"bash","decision":"deny","by":"user","always":true}}`,
			func(e Event) bool { return e.Permission.Decision == Deny && e.Permission.By == ByUser }},
		{`{"type":"compaction","time":"2026-11-28T01:02:03Z","compaction":{"tokens_before":900,"tokens_after":100,"layers":["snip"],"trigger":"budget"}}`,
			func(e Event) bool { return e.Compaction.Trigger == TriggerBudget }},
		{`{"type":"compaction","time":"2026-11-28T01:02:03Z","compaction":{"tokens_before":900,"tokens_after":100,"layers":["snip"],"trigger":"overflow"}}`,
			func(e Event) bool { return e.Compaction.Trigger == TriggerOverflow }},
		{`{"type":"compaction","time":"2026-11-28T01:02:03Z","compaction":{"tokens_before":900,"tokens_after":100,"layers":["snip"],"trigger":"manual"}}`,
			func(e Event) bool { return e.Compaction.Trigger == TriggerManual }},
		// A value outside the vocabulary (a newer writer) still round-trips:
		// the types name the known values, they do not reject others.
		{`{"type":"tool_end","time":"2026-11-28T01:02:03Z","tool":{"id":"c1","name":"bash","outcome":"quarantined"}}`,
			func(e Event) bool { return e.Tool.Outcome == "quarantined" }},
	}
	for _, tt := range tests {
		var e Event
		if err := json.Unmarshal([]byte(tt.line), &e); err != nil {
			t.Fatalf("decode %s: %v", tt.line, err)
		}
		if !tt.ok(e) {
			t.Errorf("%s decoded to %+v %+v %+v", tt.line, e.Tool, e.Permission, e.Compaction)
		}
		got, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.line {
			t.Errorf("re-encoded differently:\n got %s\nwant %s", got, tt.line)
		}
	}
}

// The outcomes counted in a run's stats keep their keys (SPEC LOOP-7).
func TestStatsCountByOutcome(t *testing.T) {
	var s Stats
	s.countTool("bash", OutcomeOK)
	s.countTool("bash", OutcomeDenied)
	s.countTool("bash", OutcomeDenied)
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"model_calls":0,"tool_calls":3,"tool_errors":2,"errors_by_tool":{"bash":{"denied":2}}}`; string(b) != want {
		t.Errorf("stats = %s, want %s", b, want)
	}
}
