package hook

import (
	"encoding/json"
	"testing"
)

// RunOutcome and Trigger keep the wire format of the plain strings they
// replaced (SPEC HOOK-3: stored hook audit records stay readable; command
// hooks read the same input JSON). These lines were written by the code
// before the types existed; each must decode to its constant and encode
// back byte for byte.
func TestRecordOutcomeWireFormat(t *testing.T) {
	const head = `{"time":"2026-11-28T01:02:03Z","hook":"h","event":"pre_tool_use","tool":"bash","session_id":"s","run_id":"r","duration_ns":5000000,"outcome":`
	for want, line := range map[RunOutcome]string{
		RunContinue:      head + `"continue"}`,
		RunBlock:         head + `"block"}`,
		RunForceContinue: head + `"force_continue"}`,
		RunStop:          head + `"stop"}`,
		RunError:         head + `"error"}`,
		RunTimeout:       head + `"timeout"}`,
		RunInterrupted:   head + `"interrupted"}`,
	} {
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("decode %s: %v", line, err)
		}
		if r.Outcome != want {
			t.Errorf("%s: outcome %q, want %q", line, r.Outcome, want)
		}
		if got, err := json.Marshal(r); err != nil || string(got) != line {
			t.Errorf("re-encoded differently (%v):\n got %s\nwant %s", err, got, line)
		}
	}
}

func TestInputTriggerWireFormat(t *testing.T) {
	for want, line := range map[Trigger]string{
		TriggerAuto:   `{"session_id":"s","cwd":"","hook_event_name":"pre_compact","trigger":"auto"}`,
		TriggerManual: `{"session_id":"s","cwd":"","hook_event_name":"pre_compact","trigger":"manual"}`,
	} {
		var in Input
		if err := json.Unmarshal([]byte(line), &in); err != nil {
			t.Fatalf("decode %s: %v", line, err)
		}
		if in.Trigger != want {
			t.Errorf("%s: trigger %q, want %q", line, in.Trigger, want)
		}
		if got, err := json.Marshal(in); err != nil || string(got) != line {
			t.Errorf("re-encoded differently (%v):\n got %s\nwant %s", err, got, line)
		}
		if s, has := in.subject(); !has || s != string(want) {
			t.Errorf("matcher subject = %q, %v; want %q", s, has, want)
		}
	}
}
