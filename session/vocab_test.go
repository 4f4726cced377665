package session

import (
	"encoding/json"
	"testing"
)

// AuditKind keeps the wire format of the plain string it replaced (SPEC
// API-7): these lines were written by the code before the type existed;
// each must decode to its constant and encode back byte for byte.
func TestAuditKindWireFormat(t *testing.T) {
	const head = `{"id":3,"time":"2026-11-28T01:02:03Z","caller":"alice","session_id":"s","run_id":"r","kind":`
	for want, line := range map[AuditKind]string{
		AuditRun:        head + `"run","data":{"n":1}}`,
		AuditToolCall:   head + `"tool_call","data":{"n":1}}`,
		AuditPermission: head + `"permission","data":{"n":1}}`,
		AuditHook:       head + `"hook","data":{"n":1}}`,
	} {
		var r AuditRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("decode %s: %v", line, err)
		}
		if r.Kind != want {
			t.Errorf("%s: kind %q, want %q", line, r.Kind, want)
		}
		if got, err := json.Marshal(r); err != nil || string(got) != line {
			t.Errorf("re-encoded differently (%v):\n got %s\nwant %s", err, got, line)
		}
	}
}
