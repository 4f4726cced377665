package runner_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
)

// failingEvents is a ledger whose AppendEvents fails for the event of
// type failType (and every one after it).
type failingEvents struct {
	*session.MemLedger
	failType string

	mu     sync.Mutex
	failed bool
}

func (l *failingEvents) AppendEvents(ctx context.Context, evs ...session.Event) error {
	l.mu.Lock()
	for _, e := range evs {
		l.failed = l.failed || e.Type == l.failType
	}
	failed := l.failed
	l.mu.Unlock()
	if failed {
		return errors.New("disk full")
	}
	return l.MemLedger.AppendEvents(ctx, evs...)
}

// API-2, SESS-1: a durable event the ledger cannot store stops the run:
// it ends failed, naming the event; no client sees that event or any
// durable one after it, and every durable event a client saw is in the
// ledger.
func TestEventNotStoredStopsRun_API2(t *testing.T) {
	for _, failType := range []agent.EventType{agent.EventMessage, agent.EventToolStart, agent.EventToolEnd, agent.EventDone} {
		t.Run(string(failType), func(t *testing.T) {
			ctx := context.Background()
			p := llmtest.NewScripted(
				llmtest.Reply{Text: "let me look", ToolCalls: []llm.ToolUse{llmtest.Call("c1", "list_dir", `{"path":"."}`)}},
				llmtest.Reply{Text: "done"})
			sessions := session.NewMemStore()
			ledger := &failingEvents{MemLedger: session.NewMemLedger(), failType: string(failType)}
			bus := eventbus.NewMemory(eventbus.Options{})
			t.Cleanup(func() { bus.Close() })
			dir := t.TempDir()
			svc, s := scriptedService(t, sessions, ledger, bus, p, dir, 0)
			sub, err := bus.Subscribe(ctx, s.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			r, err := svc.Submit(ctx, session.Submission{SessionID: s.ID, Caller: "alice", Text: "look"})
			if err != nil {
				t.Fatal(err)
			}
			var run *session.Run
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
				if run, err = ledger.GetRun(ctx, r.ID); err != nil {
					t.Fatal(err)
				}
				if run.Status.Final() {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("run still %s after a minute", run.Status)
				}
			}
			if run.Status != session.RunFailed || !strings.Contains(run.Error, "store "+string(failType)+" event") {
				t.Errorf("run ended %s (%q), want failed storing its %s event", run.Status, run.Error, failType)
			}
			stored, err := ledger.Events(ctx, s.ID, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			inLedger := map[int64]bool{}
			for _, e := range stored {
				inLedger[e.ID] = true
				if e.Type == string(failType) {
					t.Errorf("the %s event is in the ledger though its write failed", failType)
				}
			}
			for {
				select {
				case ev := <-sub.Events():
					if ev.Durable && !inLedger[ev.ID] {
						t.Errorf("a client saw durable event %d (%s) that is not in the ledger", ev.ID, ev.Type)
					}
					continue
				case <-time.After(100 * time.Millisecond):
				}
				break
			}
		})
	}
}

// scriptedService starts a service running the scripted model p on
// sessions and ledger, publishing on bus (MaxConcurrent maxConcurrent, 0
// for the default), shut down at the end of the test, and creates alice's
// project workspace in dir and a session in it.
func scriptedService(t *testing.T, sessions session.Store, ledger session.Ledger, bus eventbus.Bus, p llm.Provider, dir string, maxConcurrent int) (*runner.Service, *session.Session) {
	t.Helper()
	ctx := context.Background()
	env := map[string]string{"HOME": t.TempDir(), "PATH": os.Getenv("PATH"), "REIN_SANDBOX": "off"}
	svc := startService(t, runner.ServiceConfig{Sessions: sessions, Ledger: ledger, Bus: bus, DataDir: t.TempDir(),
		MaxConcurrent: maxConcurrent, Getenv: func(k string) string { return env[k] },
		Resolve: scriptedModel(p)})
	ws := &session.Workspace{Caller: "alice", Kind: session.WorkspaceProject, Dir: dir}
	if err := ledger.CreateWorkspace(ctx, ws); err != nil {
		t.Fatal(err)
	}
	s := &session.Session{Caller: "alice", Workspace: ws.ID, WorkDir: dir}
	if err := sessions.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	return svc, s
}
