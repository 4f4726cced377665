package sqlite_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/sqlite"
)

// BenchmarkServerRunWrites replays the durable writes one run of rein
// serve makes on its store (issue 30: a new session, one shell call and a
// reply), in the order the server makes them, for 1 and 16 sessions at
// once: the session, the run queued and started, each durable event's
// log entry and then its stream event (with its audit record, and the
// run's end with the last), the permission decision's audit record, the
// tool's process group, and the session's totals with the run's end.
// cpu-ms/run is the process's CPU a run (steadier than the wall clock on
// a shared machine); synchronous=FULL, as the server runs. With
// log=event, each log entry is stored with its event (EventWrite.Log,
// as the server does now); with log=apart, before it (as it did before).
func BenchmarkServerRunWrites(b *testing.B) {
	for _, c := range []struct {
		sessions int
		merged   bool
	}{{1, false}, {16, false}, {1, true}, {16, true}} {
		name := fmt.Sprintf("log=apart/sessions=%d", c.sessions)
		if c.merged {
			name = fmt.Sprintf("log=event/sessions=%d", c.sessions)
		}
		sessions := c.sessions
		b.Run(name, func(b *testing.B) {
			st := newStore(b, sqlite.Options{})
			ws := &session.Workspace{Caller: "alice", Kind: session.WorkspaceProject, Dir: b.TempDir()}
			if err := st.CreateWorkspace(ctx, ws); err != nil {
				b.Fatal(err)
			}
			var next sync.Mutex
			n := 0
			cpu := processCPU()
			b.ResetTimer()
			var wg sync.WaitGroup
			errs := make(chan error, sessions)
			for range sessions {
				wg.Go(func() {
					for {
						next.Lock()
						i := n
						n++
						next.Unlock()
						if i >= b.N {
							return
						}
						if err := serverRun(st, ws, i, c.merged); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Minutes(), "runs/min")
			b.ReportMetric(float64(processCPU()-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/run")
		})
	}
}

// serverRun makes the writes of run i, in a session of its own; merged
// stores each log entry with its event.
func serverRun(st *sqlite.Store, ws *session.Workspace, i int, merged bool) error {
	s := &session.Session{Caller: "alice", Workspace: ws.ID, WorkDir: ws.Dir}
	if err := st.Create(ctx, s); err != nil {
		return err
	}
	opts := json.RawMessage(`{"session_id":"` + s.ID + `","caller":"alice","text":"run the tests"}`)
	run := &session.Run{SessionID: s.ID, Caller: "alice", Prompt: fmt.Sprint("run ", i), Options: opts}
	if err := st.CreateRun(ctx, run); err != nil {
		return err
	}
	run.Status, run.StartedAt = session.RunRunning, time.Now()
	if err := st.UpdateRun(ctx, run); err != nil {
		return err
	}
	msgs := benchEntries(4)
	eventID := int64(0)
	var staged *session.LogAppend // merged: the entries waiting for the next event
	logged := func(entries []session.Entry, change func(*session.Session) bool) error {
		if merged {
			staged = &session.LogAppend{Entries: entries, Change: change}
			return nil
		}
		if change == nil {
			_, err := st.Append(ctx, s.ID, entries...)
			return err
		}
		_, err := session.AppendUpdate(ctx, st, s.ID, entries, change)
		return err
	}
	event := func(typ string, data any, audit *session.AuditRecord, ended *session.Run) error {
		b, err := json.Marshal(data)
		if err != nil {
			return err
		}
		eventID++
		w := session.EventWrite{Event: session.Event{SessionID: s.ID, ID: eventID << 20,
			RunID: run.ID, Type: typ, Time: time.Now(), Data: b}, Audit: audit, Run: ended, Log: staged}
		staged = nil
		return session.WriteEvent(ctx, st, w)
	}
	record := func(e session.Entry, typ string, data any, audit *session.AuditRecord) error {
		e.RunID, e.Time = run.ID, time.Now()
		if err := logged([]session.Entry{e}, nil); err != nil {
			return err
		}
		return event(typ, data, audit, nil)
	}
	audit := func(kind session.AuditKind) *session.AuditRecord {
		return &session.AuditRecord{Caller: "alice", SessionID: s.ID, RunID: run.ID, Kind: kind, Data: json.RawMessage(`{"tool":"bash"}`)}
	}
	prompt := msgs[0]
	prompt.RunID, prompt.Time = run.ID, time.Now()
	if err := logged([]session.Entry{prompt}, func(ss *session.Session) bool {
		ss.Preview = session.PreviewOf(prompt.Message.TextOf())
		return true
	}); err != nil {
		return err
	}
	if err := event("message", prompt.Message, nil, nil); err != nil {
		return err
	}
	if err := record(msgs[1], "message", msgs[1].Message, nil); err != nil {
		return err
	}
	if err := st.AppendAudit(ctx, *audit(session.AuditPermission)); err != nil {
		return err
	}
	call := msgs[1].Message.Content[1].(*llm.ToolUse)
	start := session.Entry{Kind: session.KindToolStart, ToolStart: &session.ToolStart{CallID: call.ID, Tool: call.Name, Input: call.Input}}
	if err := record(start, "tool_start", start.ToolStart, nil); err != nil {
		return err
	}
	proc := session.Entry{Kind: session.KindToolProcess, RunID: run.ID, ToolProcess: &session.ToolProcess{CallID: call.ID, PGID: 4242}}
	if _, err := st.Append(ctx, s.ID, proc); err != nil {
		return err
	}
	end := session.Entry{Kind: session.KindToolEnd, ToolEnd: &session.ToolEnd{CallID: call.ID, Tool: call.Name, Output: "hi\n", Outcome: "success"}}
	if err := record(end, "tool_end", end.ToolEnd, audit(session.AuditToolCall)); err != nil {
		return err
	}
	for _, m := range msgs[2:] {
		if err := record(m, "message", m.Message, nil); err != nil {
			return err
		}
	}
	rec := session.RunRecord{ID: run.ID, Provider: "scripted", Model: "m", StartedAt: run.StartedAt, EndedAt: time.Now(), Reason: "completed", Turns: 2}
	if err := logged([]session.Entry{{Kind: session.KindRun, Time: time.Now(), RunID: run.ID, Run: &rec}},
		func(ss *session.Session) bool {
			ss.Runs++
			ss.Model = "scripted/m"
			ss.UpdatedAt = time.Now()
			return true
		}); err != nil {
		return err
	}
	ended := *run
	ended.Status, ended.Reason, ended.EndedAt, ended.Turns = session.RunCompleted, "completed", time.Now(), 2
	return event("done", map[string]any{"reason": "completed", "turns": 2}, audit(session.AuditRun), &ended)
}
