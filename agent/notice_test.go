package agent

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// notices is a Config.Notices source: what was queued, once.
type notices struct {
	mu    sync.Mutex
	queue []string
	asked int
}

func (n *notices) add(s string) { n.mu.Lock(); n.queue = append(n.queue, s); n.mu.Unlock() }

func (n *notices) take() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.asked++
	q := n.queue
	n.queue = nil
	return q
}

// TOOL-8: a notice that comes up while a tool runs reaches the model at
// its next turn, after the tool results; it is stored with them and sent
// byte for byte the same in every later request (the prompt cache keeps
// its prefix); a notice queued between runs rides on the next prompt,
// after the user's text, which stays the focus's goal.
func TestNoticesReachNextTurn_TOOL8(t *testing.T) {
	src := &notices{}
	src.add("<system-reminder>job 1 ended before this run</system-reminder>")
	p := llmtest.NewScripted(
		llmtest.Reply{ToolCalls: []llm.ToolUse{call("c1", "read", sleepIn{ID: "a"})}},
		llmtest.Reply{ToolCalls: []llm.ToolUse{call("c2", "read", sleepIn{ID: "b"})}},
		llmtest.Reply{Text: "done"},
	)
	a := newAgent(p, testTools(t, &probe{}), func(c *Config) { c.Notices = src.take })
	first := true
	var res result
	for ev := range a.Run(ctxb, Input{Prompt: prompt("go on")}) {
		if ev.Type == EventToolStart && first {
			first = false
			src.add("<system-reminder>job 2 ended</system-reminder>")
		}
		if ev.Type == EventMessage {
			res.msgs = append(res.msgs, *ev.Message)
		}
		if ev.Type == EventDone {
			res.done = ev.Done
		}
	}
	if res.done == nil || res.done.Reason != ReasonCompleted {
		t.Fatalf("done = %+v", res.done)
	}
	reqs := p.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	// The prompt carries the notice queued before the run, after the text.
	pm := reqs[0].Messages[0]
	if len(pm.Content) != 2 || pm.Content[0].(*llm.Text).Text != "go on" || !strings.Contains(pm.Content[1].(*llm.Text).Text, "job 1 ended") {
		t.Fatalf("prompt sent as %+v", pm.Content)
	}
	if res.done.Focus.Goal != "go on" {
		t.Errorf("focus goal %q: the notice leaked into it", res.done.Focus.Goal)
	}
	// The results of turn 1 carry the notice of the job that ended meanwhile.
	rm := reqs[1].Messages[2]
	if len(rm.ToolResults()) != 1 || !strings.Contains(rm.Content[len(rm.Content)-1].(*llm.Text).Text, "job 2 ended") {
		t.Fatalf("results sent as %+v", rm.Content)
	}
	// The later request repeats the earlier messages byte for byte.
	for i := range reqs[1].Messages {
		a, _ := json.Marshal(reqs[1].Messages[i])
		b, _ := json.Marshal(reqs[2].Messages[i])
		if string(a) != string(b) {
			t.Fatalf("message %d changed between requests:\n%s\n%s", i, a, b)
		}
	}
	// And it is what the run stored.
	stored, _ := json.Marshal(res.msgs[2])
	sent, _ := json.Marshal(rm)
	if string(stored) != string(sent) {
		t.Fatalf("stored %s\nsent %s", stored, sent)
	}
	if strings.Count(string(mustJSON(t, reqs[2].Messages)), "job 2 ended") != 1 {
		t.Error("the notice was told more than once")
	}
	if src.asked != 3 {
		t.Errorf("notices asked %d times, want once per appended user message (3)", src.asked)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
