package permission

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRedact_PERM4(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"command":"ls","api_key":"abc","max_tokens":5}`, `{"api_key":"[REDACTED]","command":"ls","max_tokens":5}`},
		{`{"headers":{"Authorization":"x","Accept":"y"}}`, `{"headers":{"Accept":"y","Authorization":"[REDACTED]"}}`},
		{`{"apiKey":"a","GITHUB_TOKEN":"b","password":"c","client-secret":"d","keyboard":"e","monkey":"f"}`,
			`{"GITHUB_TOKEN":"[REDACTED]","apiKey":"[REDACTED]","client-secret":"[REDACTED]","keyboard":"e","monkey":"f","password":"[REDACTED]"}`},
		{`{"env":[{"name":"x","secret":{"a":1}}]}`, `{"env":[{"name":"x","secret":"[REDACTED]"}]}`},
		{`{"command":"curl -H 'Authorization: Bearer abcdefghijklmnop' https://x"}`, `{"command":"curl -H 'Authorization: [REDACTED]' https://x"}`},
		{`{"command":"export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz"}`, `{"command":"export OPENAI_API_KEY=[REDACTED]"}`},
		{`{"n":12345678901234567890}`, `{"n":12345678901234567890}`},
		{`not json ghp_abcdefghijklmnopqrstuvwxyz`, `"not json [REDACTED]"`},
		{``, ``},
	}
	for _, c := range cases {
		if got := string(Redact(json.RawMessage(c.in))); got != c.want {
			t.Errorf("Redact(%s)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

// PERM-4: every decision and call is written to the JSONL audit log, with
// the input redacted.
func TestFileAuditor_PERM4(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := OpenFileAuditor(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	req := Request{Tool: "web_fetch", Input: json.RawMessage(`{"url":"https://x","token":"t0p"}`), SessionID: "s1", RunID: "r1", CallID: "c1"}
	rule := Rule{Action: DecisionAllow, Tool: "web_fetch", Pattern: "domain:x"}
	rec := NewAuditRecord(now, req, Outcome{Decision: DecisionAllow, Reason: "allowed", Rule: &rule})
	rec.Duration, rec.Outcome = 1500*time.Millisecond, OutcomeOK
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if err := a.Record(ctx, rec); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	raw := rec
	raw.Input = req.Input // an unredacted record is redacted by the auditor
	raw.Decision, raw.DecidedBy, raw.Answer, raw.Outcome = DecisionDeny, DecidedByUser, AnswerDeny, OutcomeDenied
	if err := a.Record(ctx, raw); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Record(ctx, rec); err == nil {
		t.Error("Record after Close succeeded")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []AuditRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "t0p") {
			t.Errorf("secret in the log: %s", sc.Text())
		}
		var r AuditRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got = append(got, r)
	}
	if len(got) != 21 {
		t.Fatalf("%d lines, want 21", len(got))
	}
	want := AuditRecord{Time: now, SessionID: "s1", RunID: "r1", CallID: "c1", Tool: "web_fetch",
		Input: json.RawMessage(`{"token":"[REDACTED]","url":"https://x"}`), Decision: DecisionAllow,
		Reason: "allowed", Rule: "web_fetch(domain:x)", DecidedBy: DecidedByPolicy, Duration: 1500 * time.Millisecond, Outcome: OutcomeOK}
	if diff := cmp.Diff(want, got[0]); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	if last := got[20]; last.Answer != AnswerDeny || last.DecidedBy != DecidedByUser || last.Outcome != OutcomeDenied || !strings.Contains(string(last.Input), "REDACTED") {
		t.Errorf("last record: %+v", last)
	}
	line, _ := json.Marshal(want)
	if !strings.Contains(string(line), `"duration_ms":1500`) || !strings.Contains(string(line), `"decided_by":"policy"`) {
		t.Errorf("duration not in milliseconds: %s", line)
	}
}

func TestMemoryAuditor_PERM4(t *testing.T) {
	var a MemoryAuditor
	_ = a.Record(context.Background(), AuditRecord{Tool: "bash", Input: json.RawMessage(`{"password":"x"}`), Outcome: OutcomeInterrupted})
	want := []AuditRecord{{Tool: "bash", Input: json.RawMessage(`{"password":"[REDACTED]"}`), Outcome: OutcomeInterrupted}}
	if diff := cmp.Diff(want, a.Records()); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}
