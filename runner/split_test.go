package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/runner/queue"
	"github.com/reinhq/rein/session"
)

// broadcast is an in-process Broadcaster: every listener gets every
// message, as Redis pub/sub gives them to every process.
type broadcast struct {
	mu        sync.Mutex
	listeners map[int]func([]byte)
	next      int
}

func (b *broadcast) Broadcast(_ context.Context, msg []byte) (int, error) {
	b.mu.Lock()
	ls := make([]func([]byte), 0, len(b.listeners))
	for _, l := range b.listeners {
		ls = append(ls, l)
	}
	b.mu.Unlock()
	for _, l := range ls {
		l(msg)
	}
	return len(ls), nil
}

func (b *broadcast) Listen(ctx context.Context, ready func(), deliver func([]byte)) error {
	b.mu.Lock()
	if b.listeners == nil {
		b.listeners = map[int]func([]byte){}
	}
	id := b.next
	b.next++
	b.listeners[id] = deliver
	b.mu.Unlock()
	ready()
	<-ctx.Done()
	b.mu.Lock()
	delete(b.listeners, id)
	b.mu.Unlock()
	return ctx.Err()
}

// split is an API service and a worker service sharing a store, a ledger,
// a bus and a queue, as two processes share PostgreSQL and Redis.
type split struct {
	*harness
	api, worker *runner.Service
	q           queue.Queue
}

// newSplit builds the pair over h's store; the worker works until the
// test ends. q nil means an in-process queue.
func newSplit(t *testing.T, p llm.Provider, q queue.Queue, getenv func(string) string, tune ...func(c *runner.ServiceConfig, worker bool)) *split {
	t.Helper()
	h := newHarness(t, p, runner.ServiceConfig{Getenv: getenv}) // its own service stays unused
	if q == nil {
		mq, err := queue.NewMemory(queue.Options{TTL: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mq.Close() })
		q = mq
	}
	b := &broadcast{}
	env := map[string]string{"HOME": t.TempDir(), "PATH": os.Getenv("PATH"), "REIN_SANDBOX": "off"}
	cfg := func(worker bool) runner.ServiceConfig {
		c := runner.ServiceConfig{Sessions: h.sessions, Ledger: h.ledger, Bus: h.bus, DataDir: t.TempDir(),
			Queue: q, Broadcast: b,
			Getenv: func(k string) string {
				if getenv != nil {
					if v := getenv(k); v != "" {
						return v
					}
				}
				return env[k]
			},
			Resolve: scriptedModel(p)}
		for _, f := range tune {
			f(&c, worker)
		}
		return c
	}
	s := &split{harness: h, q: q}
	var err error
	if s.api, err = runner.NewService(cfg(false)); err != nil {
		t.Fatal(err)
	}
	if s.worker, err = runner.NewService(cfg(true)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	worked := make(chan error, 1)
	go func() { worked <- s.worker.Work(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-worked; err != nil {
			t.Errorf("Work: %v", err)
		}
		down, stop := context.WithTimeout(context.Background(), 30*time.Second)
		defer stop()
		s.worker.Shutdown(down)
		s.api.Shutdown(down)
	})
	return s
}

// API-5: messages posted to the API service run on the worker, in order
// per session, and every one completes.
func TestSplitRunsOnWorker_API5(t *testing.T) {
	var mu sync.Mutex
	seen := map[string][]string{} // by session: the prompts in the order the model got them
	p := &llmtest.Scripted{Repeat: &llmtest.Reply{Func: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		text := llmtest.LastUserText(req)
		mu.Lock()
		seen[text[:1]] = append(seen[text[:1]], text)
		mu.Unlock()
		return llmtest.NewScripted(llmtest.Reply{Text: "ok " + text}).Stream(ctx, req)
	}}}
	s := newSplit(t, p, nil, nil)
	ctx := context.Background()
	a, b := s.newSession(t), s.newSession(t)
	var runs []string
	for i := range 4 {
		for sid, prefix := range map[string]string{a.ID: "a", b.ID: "b"} {
			r, err := s.api.Submit(ctx, session.Submission{SessionID: sid, Caller: "alice", Text: prefix + string(rune('0'+i))})
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != session.RunQueued {
				t.Errorf("submitted run is %s", r.Status)
			}
			runs = append(runs, r.ID)
		}
	}
	for _, id := range runs {
		if r := s.wait(t, id); r.Status != session.RunCompleted {
			t.Errorf("run %s: %s %s", id, r.Status, r.Error)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, prefix := range []string{"a", "b"} {
		want := []string{prefix + "0", prefix + "1", prefix + "2", prefix + "3"}
		if got := seen[prefix]; len(got) != 4 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
			t.Errorf("session %s: the model got %v, want %v", prefix, got, want)
		}
	}
}

// API-5, API-3: a cancellation and a permission answer given to the API
// service reach the run on the worker.
func TestSplitCancelAndAnswer_API5(t *testing.T) {
	started := make(chan string, 4)
	p := &llmtest.Scripted{Repeat: &llmtest.Reply{Func: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		text := llmtest.LastUserText(req)
		switch text {
		case "hang":
			started <- text
			return llmtest.NewScripted(llmtest.Reply{Text: "…", Hang: true}).Stream(ctx, req)
		case "write":
			return llmtest.NewScripted(llmtest.Reply{ToolCalls: []llm.ToolUse{
				llmtest.Call("c1", "write_file", `{"path":"a.txt","content":"hi"}`)}}).Stream(ctx, req)
		}
		return llmtest.NewScripted(llmtest.Reply{Text: "done"}).Stream(ctx, req)
	}}}
	s := newSplit(t, p, nil, nil)
	ctx := context.Background()
	sess := s.newSession(t)
	hang, err := s.api.Submit(ctx, session.Submission{SessionID: sess.ID, Caller: "alice", Text: "hang"})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	if _, err := s.api.Cancel(ctx, hang.ID); err != nil {
		t.Fatal(err)
	}
	if r := s.wait(t, hang.ID); r.Status != session.RunCancelled {
		t.Errorf("the cancelled run ended %s (%s)", r.Status, r.Error)
	}

	sub, err := s.bus.Subscribe(ctx, sess.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	w, err := s.api.Submit(ctx, session.Submission{SessionID: sess.ID, Caller: "alice", Text: "write"})
	if err != nil {
		t.Fatal(err)
	}
	for ev := range sub.Events() {
		var a agent.Event
		json.Unmarshal(ev.Data, &a)
		if a.Type == agent.EventPermissionRequest && a.RunID == w.ID {
			// A call the worker does not ask about is not found there.
			if err := s.api.Answer(ctx, w.ID, "no-such-call", permission.Verdict{Answer: permission.AnswerOnce}); !errors.Is(err, session.ErrNotFound) {
				t.Errorf("answering an unknown call through the API service: %v, want ErrNotFound", err)
			}
			if err := s.api.Answer(ctx, w.ID, a.Permission.CallID, permission.Verdict{Answer: permission.AnswerOnce}); err != nil {
				t.Fatalf("answer through the API service: %v", err)
			}
		}
		if a.Type == agent.EventPermissionDecision && a.RunID == w.ID {
			if a.Permission.Decision != "allow" || a.Permission.By != "user" {
				t.Errorf("decision: %+v", *a.Permission)
			}
			break
		}
	}
	if r := s.wait(t, w.ID); r.Status != session.RunCompleted {
		t.Errorf("the answered run ended %s (%s)", r.Status, r.Error)
	}
	if b, err := os.ReadFile(s.dir + "/a.txt"); err != nil || string(b) != "hi" {
		t.Errorf("a.txt: %q, %v", b, err)
	}
	if err := s.api.Answer(ctx, w.ID, "c1", permission.Verdict{Answer: permission.AnswerOnce}); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("answering an ended run: %v, want ErrNotFound", err)
	}
}

// deafBroadcast is a Broadcaster whose Listen listens only once open is
// closed: a worker's subscription that takes its time (Redis's
// confirmation on the way).
type deafBroadcast struct {
	runner.Broadcaster
	open chan struct{}
}

func (d *deafBroadcast) Listen(ctx context.Context, ready func(), deliver func([]byte)) error {
	select {
	case <-d.open:
	case <-ctx.Done():
		return ctx.Err()
	}
	return d.Broadcaster.Listen(ctx, ready, deliver)
}

// API-5: a worker takes no run before it listens for signals, so a
// cancellation sent as soon as its run started is never lost (it was,
// about one time in five, when the listener subscribed after the worker
// had taken the run).
func TestSplitWorkerListensBeforeTaking_API5(t *testing.T) {
	started := make(chan string, 1)
	p := &llmtest.Scripted{Repeat: &llmtest.Reply{Func: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		started <- llmtest.LastUserText(req)
		return llmtest.NewScripted(llmtest.Reply{Text: "…", Hang: true}).Stream(ctx, req)
	}}}
	open := make(chan struct{})
	s := newSplit(t, p, nil, nil, func(c *runner.ServiceConfig, worker bool) {
		if worker {
			c.Broadcast = &deafBroadcast{Broadcaster: c.Broadcast, open: open}
		}
	})
	ctx := context.Background()
	sess := s.newSession(t)
	run, err := s.api.Submit(ctx, session.Submission{SessionID: sess.ID, Caller: "alice", Text: "hang"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
		t.Fatal("the worker took a run before it listened for cancellations")
	case <-time.After(200 * time.Millisecond):
	}
	close(open)
	<-started
	if _, err := s.api.Cancel(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if r := s.wait(t, run.ID); r.Status != session.RunCancelled {
		t.Errorf("the cancelled run ended %s (%s)", r.Status, r.Error)
	}
}

// A worker that takes a session a dead worker held marks the run it left
// running interrupted and heals the session, then runs the queued ones.
func TestSplitTakesOverCutRun_API5(t *testing.T) {
	p := llmtest.NewScripted(llmtest.Reply{Text: "second done"})
	s := newSplit(t, p, nil, nil)
	ctx := context.Background()
	sess := s.newSession(t)
	// What a worker killed mid-run leaves: a run marked running and the
	// session's prompt stored.
	cut := &session.Run{SessionID: sess.ID, Caller: "alice", Prompt: "first", Status: session.RunRunning, StartedAt: time.Now()}
	if err := s.ledger.CreateRun(ctx, cut); err != nil {
		t.Fatal(err)
	}
	r, err := s.api.Submit(ctx, session.Submission{SessionID: sess.ID, Caller: "alice", Text: "second"})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.wait(t, r.ID); got.Status != session.RunCompleted {
		t.Errorf("the queued run ended %s (%s)", got.Status, got.Error)
	}
	got, err := s.ledger.GetRun(ctx, cut.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != session.RunInterrupted || got.Error == "" {
		t.Errorf("the cut run: %s %q, want interrupted with a reason", got.Status, got.Error)
	}
}

// unavailableQueue refuses every Enqueue as an unreachable Redis does.
type unavailableQueue struct{ queue.Queue }

func (unavailableQueue) Enqueue(context.Context, string) error {
	return queue.ErrUnavailable
}

// API-5: when the queue cannot take a message, Submit says the store is
// unavailable (the server's 503) and the run it stored is marked failed:
// no run is left queued that nobody will take, none is acknowledged.
func TestSplitQueueUnavailable_API5(t *testing.T) {
	mq, err := queue.NewMemory(queue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer mq.Close()
	s := newSplit(t, llmtest.NewScripted(), unavailableQueue{mq}, nil)
	ctx := context.Background()
	sess := s.newSession(t)
	if _, err := s.api.Submit(ctx, session.Submission{SessionID: sess.ID, Caller: "alice", Text: "hi"}); !errors.Is(err, session.ErrUnavailable) {
		t.Fatalf("Submit with the queue down: %v, want ErrUnavailable", err)
	}
	runs, err := s.ledger.ListRuns(ctx, session.RunFilter{SessionID: sess.ID})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v, %v", runs, err)
	}
	if runs[0].Status != session.RunFailed || runs[0].Error == "" {
		t.Errorf("the refused run: %s %q, want failed with a reason", runs[0].Status, runs[0].Error)
	}
}

// PERM-3 in split mode: an ask_user question of a run on the worker is
// answered (or declined) through the API process's service, the answer
// travelling as a permission answer does (the broadcast, and the worker's
// reply).
func TestSplitAnswerQuestion_API5(t *testing.T) {
	p := &llmtest.Scripted{Repeat: &llmtest.Reply{Func: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		if last := req.Messages[len(req.Messages)-1]; len(last.ToolResults()) > 0 {
			return llmtest.NewScripted(llmtest.Reply{Text: "thanks"}).Stream(ctx, req)
		}
		return llmtest.NewScripted(llmtest.Reply{ToolCalls: []llm.ToolUse{
			llmtest.Call("q1", "ask_user", `{"question":"Which port?"}`)}}).Stream(ctx, req)
	}}}
	s := newSplit(t, p, nil, nil)
	ctx := context.Background()
	for _, c := range []struct {
		name, answer string
		declined     bool
		want         string
	}{
		{"answered", "8080", false, "The user answered: 8080"},
		{"declined", "", true, "The user declined to answer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sess := s.newSession(t)
			sub, err := s.bus.Subscribe(ctx, sess.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			r, err := s.api.Submit(ctx, session.Submission{SessionID: sess.ID, Caller: "alice", Text: "serve it"})
			if err != nil {
				t.Fatal(err)
			}
			for ev := range sub.Events() {
				var a agent.Event
				json.Unmarshal(ev.Data, &a)
				if a.Type == agent.EventQuestion && a.RunID == r.ID {
					if err := s.api.AnswerQuestion(ctx, r.ID, "no-such-call", "x", false); !errors.Is(err, session.ErrNotFound) {
						t.Errorf("answering an unknown call through the API service: %v, want ErrNotFound", err)
					}
					if err := s.api.AnswerQuestion(ctx, r.ID, a.CallID, c.answer, c.declined); err != nil {
						t.Fatalf("answer through the API service: %v", err)
					}
				}
				if a.Type == agent.EventToolEnd && a.RunID == r.ID {
					if !strings.HasPrefix(a.Tool.Output, c.want) {
						t.Errorf("the model read %q, want %q…", a.Tool.Output, c.want)
					}
					break
				}
			}
			if run := s.wait(t, r.ID); run.Status != session.RunCompleted {
				t.Errorf("the run ended %s (%s)", run.Status, run.Error)
			}
			if err := s.api.AnswerQuestion(ctx, r.ID, "q1", "again", false); !errors.Is(err, session.ErrNotFound) {
				t.Errorf("answering an ended run: %v, want ErrNotFound", err)
			}
		})
	}
}
