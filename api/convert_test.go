package api_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
)

var t0 = time.Date(2026, 11, 21, 7, 0, 0, 0, time.UTC)

// TestJSON converts core values and checks their wire JSON: snake_case,
// no caller, no work directory, no run options.
func TestJSON(t *testing.T) {
	usage := llm.Usage{InputTokens: 10, OutputTokens: 2, CacheReadTokens: 5}
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"project workspace", api.FromWorkspace(&session.Workspace{ID: "w1", Caller: "ada", Kind: session.WorkspaceProject, Dir: "/src/repo", Name: "repo", CreatedAt: t0}),
			`{"id":"w1","kind":"project","dir":"/src/repo","name":"repo","created_at":"2026-11-21T07:00:00Z"}`},
		{"chat workspace", api.FromWorkspace(&session.Workspace{ID: "w2", Caller: "ada", Kind: session.WorkspaceChat, CreatedAt: t0}),
			`{"id":"w2","kind":"chat","created_at":"2026-11-21T07:00:00Z"}`},
		{"session", api.FromSession(&session.Session{ID: "s1", WorkDir: "/src/repo", Caller: "ada", Workspace: "w1", Title: "T", Preview: "P",
			CreatedAt: t0, UpdatedAt: t0.Add(time.Minute), ParentID: "s0", ForkSeq: 4, Model: "anthropic/claude-sonnet-4-5", Usage: usage, CostUSD: 0.5, Runs: 2}),
			`{"id":"s1","workspace_id":"w1","title":"T","preview":"P","created_at":"2026-11-21T07:00:00Z","updated_at":"2026-11-21T07:01:00Z",` +
				`"parent_id":"s0","fork_seq":4,"model":"anthropic/claude-sonnet-4-5","usage":{"input_tokens":10,"output_tokens":2,"cache_read_tokens":5},"cost_usd":0.5,"runs":2}`},
		{"new session", api.FromSession(&session.Session{ID: "s2", Workspace: "w1", CreatedAt: t0, UpdatedAt: t0}),
			`{"id":"s2","workspace_id":"w1","created_at":"2026-11-21T07:00:00Z","updated_at":"2026-11-21T07:00:00Z","usage":{"input_tokens":0,"output_tokens":0}}`},
		{"queued run", api.FromRun(&session.Run{ID: "r1", SessionID: "s1", Caller: "ada", Status: session.RunQueued, Prompt: "hi",
			Options: json.RawMessage(`{"model":"x"}`), Seq: 7, CreatedAt: t0}),
			`{"id":"r1","session_id":"s1","status":"queued","prompt":"hi","created_at":"2026-11-21T07:00:00Z"}`},
		{"ended run", api.FromRun(&session.Run{ID: "r1", SessionID: "s1", Status: session.RunFailed, CreatedAt: t0, StartedAt: t0, EndedAt: t0.Add(time.Second),
			Reason: "error", Error: "boom", Turns: 3, Usage: usage, CostUSD: 0.25}),
			`{"id":"r1","session_id":"s1","status":"failed","created_at":"2026-11-21T07:00:00Z","started_at":"2026-11-21T07:00:00Z",` +
				`"ended_at":"2026-11-21T07:00:01Z","reason":"error","error":"boom","turns":3,"usage":{"input_tokens":10,"output_tokens":2,"cache_read_tokens":5},"cost_usd":0.25}`},
		{"audit record", api.FromAudit(&session.AuditRecord{ID: 3, Time: t0, Caller: "ada", SessionID: "s1", RunID: "r1", Kind: session.AuditToolCall, Data: json.RawMessage(`{"tool":"bash"}`)}),
			`{"id":3,"time":"2026-11-21T07:00:00Z","session_id":"s1","run_id":"r1","kind":"tool_call","data":{"tool":"bash"}}`},
		{"audit record without data", api.FromAudit(&session.AuditRecord{ID: 4, Time: t0, Kind: session.AuditHook}),
			`{"id":4,"time":"2026-11-21T07:00:00Z","kind":"hook","data":{}}`},
		{"audit record with broken data", api.FromAudit(&session.AuditRecord{ID: 5, Time: t0, Kind: session.AuditHook, Data: json.RawMessage(`{"x":`)}),
			`{"id":5,"time":"2026-11-21T07:00:00Z","kind":"hook","data":{}}`},
		{"empty lists", struct {
			W []api.Workspace
			S []api.Session
			R []api.Run
			A []api.AuditRecord
		}{api.FromWorkspaces(nil), api.FromSessions(nil), api.FromRuns(nil), api.FromAudits(nil)},
			`{"W":[],"S":[],"R":[],"A":[]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, string(b)); d != "" {
				t.Errorf("JSON (-want +got):\n%s", d)
			}
			for _, leak := range []string{"caller", "ada", "work_dir", "options", `"seq"`} {
				if strings.Contains(string(b), leak) {
					t.Errorf("the JSON holds %q", leak)
				}
			}
		})
	}
}

func TestListsConvert(t *testing.T) {
	ws := []*session.Workspace{{ID: "a", Kind: session.WorkspaceChat}, {ID: "b", Kind: session.WorkspaceChat}}
	rs := []*session.Run{{ID: "r1", Status: session.RunQueued}}
	ss := []*session.Session{{ID: "s1"}}
	as := []session.AuditRecord{{ID: 1, Kind: "run", Data: json.RawMessage(`{}`)}}
	if d := cmp.Diff([]api.Workspace{{ID: "a", Kind: "chat"}, {ID: "b", Kind: "chat"}}, api.FromWorkspaces(ws)); d != "" {
		t.Error(d)
	}
	if d := cmp.Diff([]api.Run{{ID: "r1", Status: "queued"}}, api.FromRuns(rs)); d != "" {
		t.Error(d)
	}
	if d := cmp.Diff([]api.Session{{ID: "s1"}}, api.FromSessions(ss)); d != "" {
		t.Error(d)
	}
	if d := cmp.Diff([]api.AuditRecord{{ID: 1, Kind: "run", Data: json.RawMessage(`{}`)}}, api.FromAudits(as)); d != "" {
		t.Error(d)
	}
}
