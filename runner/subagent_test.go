package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/workspace"
)

// routed is a provider that answers each request by the agent asking:
// the first line of its system prompt picks the script, and the number of
// assistant messages so far picks the step. Sub-agents run in parallel, so
// a single ordered script would not do.
type routed struct {
	mu       sync.Mutex
	scripts  map[string][]llmtest.Reply
	requests map[string][]*llm.Request
}

func (r *routed) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
	who := strings.SplitN(req.System, "\n", 2)[0]
	step := 0
	for _, m := range req.Messages {
		if m.Role == llm.RoleAssistant {
			step++
		}
	}
	r.mu.Lock()
	if r.requests == nil {
		r.requests = map[string][]*llm.Request{}
	}
	r.requests[who] = append(r.requests[who], req)
	script := r.scripts[who]
	r.mu.Unlock()
	if step >= len(script) {
		return llmtest.NewScripted(llmtest.Reply{Text: "(no more script for " + who + ")"}).Stream(ctx, req)
	}
	return llmtest.NewScripted(script[step]).Stream(ctx, req)
}

func (r *routed) tools(who string, i int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var names []string
	for _, s := range r.requests[who][i].Tools {
		names = append(names, s.Name)
	}
	return names
}

// newEngine builds an engine over a fresh HOME whose user-level agents are
// given (name → file content), with the provider for every model.
func newEngine(t testing.TB, p llm.Provider, agents map[string]string, env map[string]string, homeFiles ...map[string]string) *runner.Conversation {
	t.Helper()
	home := map[string]string{}
	for _, files := range homeFiles {
		maps.Copy(home, files)
	}
	for name, text := range agents {
		home[filepath.Join(".config", "rein", "agents", name+".md")] = text
	}
	return testEngine(t, p, engineSetup{home: home, env: env})
}

// engineSetup is what testEngine builds an engine over: files of the
// HOME and of the workspace (relative paths), variables on top of a clean
// environment, and whether the user trusted the workspace.
type engineSetup struct {
	home, workspace map[string]string
	env             map[string]string
	trusted         bool
	agent           string // the main agent (--agent)
}

// testEngine builds a conversation in a fresh HOME and workspace, with p as
// every model, and closes it when the test ends.
func testEngine(t testing.TB, p llm.Provider, s engineSetup) *runner.Conversation {
	t.Helper()
	home, dir := t.TempDir(), t.TempDir()
	writeFiles(t, home, s.home)
	writeFiles(t, dir, s.workspace)
	env := map[string]string{"HOME": home, "PATH": os.Getenv("PATH"), "REIN_SANDBOX": "off", "REIN_MODEL": "scripted/m"}
	maps.Copy(env, s.env)
	getenv := func(k string) string { return env[k] }
	load := func() *workspace.Loaded {
		l, err := workspace.Load(workspace.Options{WorkDir: dir, Getenv: getenv})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	l := load()
	if s.trusted {
		if err := l.TrustNow(time.Now()); err != nil {
			t.Fatal(err)
		}
		l = load()
	}
	setup, err := runner.NewSetup(runner.Config{Loaded: l, Store: session.NewMemStore(), SessionsDir: t.TempDir(), Getenv: getenv, Agent: s.agent,
		Resolve: func(_ *registry.Registry, spec string) (*runner.Model, error) {
			return &runner.Model{Provider: p, ProviderName: "scripted", Name: "m", Label: spec,
				Caps: registry.Model{Name: "m", ContextWindow: 200_000, MaxOutput: 8_000}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if setup, err = setup.WithModel(setup.ModelSpec(nil)); err != nil {
		t.Fatal(err)
	}
	e := setup.NewConversation()
	t.Cleanup(func() { e.Close(); setup.Close() })
	return e
}

// writeFiles writes files (relative path → content) under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for rel, text := range files {
		path := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

const (
	finderAgent = "---\nname: finder\ndescription: Finds things.\ntools: [read_file, grep, task]\n---\nFINDER\nYou find things.\n"
	digAgent    = "---\nname: dig\ndescription: Digs deeper.\nmax_turns: 5\n---\nDIG\nYou dig.\n"
)

func call(id, name string, in any) llm.ToolUse {
	b, _ := json.Marshal(in)
	return llm.ToolUse{ID: id, Name: name, Input: b}
}

func usage(in, out int64) llm.Usage { return llm.Usage{InputTokens: in, OutputTokens: out} }

// AGENT-4: two task calls of one reply run in parallel, each sub-agent
// with a fresh context and its own tools; a sub-agent starts one of its
// own; every event of the tree reaches the parent's stream marked with its
// agent and parent call; the transcripts are stored with the session, not
// in its conversation; and the parent's done counts the whole tree.
func TestSubagentTree_AGENT4(t *testing.T) {
	p := &routed{scripts: map[string][]llmtest.Reply{}}
	top := strings.SplitN(agent.DefaultInstructions, "\n", 2)[0]
	p.scripts[top] = []llmtest.Reply{
		{ToolCalls: []llm.ToolUse{call("c1", "task", map[string]string{"agent": "finder", "prompt": "find A"}),
			call("c2", "task", map[string]string{"agent": "dig", "prompt": "dig B"})}, Usage: usage(100, 10)},
		{Text: "both done", Usage: usage(200, 20)},
	}
	p.scripts["FINDER"] = []llmtest.Reply{
		{ToolCalls: []llm.ToolUse{call("c1", "task", map[string]string{"agent": "dig", "prompt": "dig for finder"})}, Usage: usage(10, 1)},
		{Text: "A is in a.go", Usage: usage(20, 2)},
	}
	p.scripts["DIG"] = []llmtest.Reply{{Text: "dug", Usage: usage(1000, 100)}}
	hookLog := filepath.Join(t.TempDir(), "hooks.log")
	logIt := "    - {command: \"cat >> " + hookLog + "; echo >> " + hookLog + "\"}\n"
	hooks := map[string]string{".config/rein/hooks.yaml": "hooks:\n  subagent_start:\n" + logIt +
		"  subagent_stop:\n" + logIt + "  session_start:\n" + logIt}
	e := newEngine(t, p, map[string]string{"finder": finderAgent, "dig": digAgent}, nil, hooks)

	var events []agent.Event
	for ev, err := range e.Submit(ctx, "", "go", nil) {
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	done := events[len(events)-1]
	if done.Type != agent.EventDone || done.Done.Reason != agent.ReasonCompleted || done.Done.Text != "both done" {
		t.Fatalf("last event = %+v", done)
	}
	// Totals: top 300/30, finder 30/3, dig twice 2000/200.
	if want := usage(2330, 233); done.Done.Usage != want {
		t.Errorf("done usage = %+v, want the whole tree's %+v", done.Done.Usage, want)
	}
	if done.Done.Stats.Subagents != 2 {
		t.Errorf("stats.subagents = %d, want the 2 the top run started", done.Done.Stats.Subagents)
	}
	var starts, ends, dones, runStarts int
	marks := map[string]bool{}
	for _, ev := range events {
		switch ev.Type {
		case agent.EventSubagentStart:
			starts++
		case agent.EventSubagentEnd:
			ends++
		case agent.EventDone:
			dones++
		case agent.EventRunStart:
			runStarts++
		}
		if s := ev.Subagent; s != nil {
			marks[s.Agent+"/"+s.ParentCallID+"/"+string(rune('0'+s.Depth))] = true
			if ev.SessionID != e.SessionID() {
				t.Errorf("nested event carries session %q", ev.SessionID)
			}
		}
	}
	if starts != 3 || ends != 3 || dones != 1 || runStarts != 1 {
		t.Errorf("subagent_start %d, subagent_end %d, done %d, run_start %d; want 3, 3, 1, 1", starts, ends, dones, runStarts)
	}
	for _, m := range []string{"finder/c1/1", "dig/c2/1", "dig/c1/2"} {
		if !marks[m] {
			t.Errorf("no event marked %s; marks: %v", m, marks)
		}
	}
	// Fresh context and own tools: finder's first request holds only its
	// prompt, under its own system prompt, with the tools it allows.
	finderReq := p.requests["FINDER"][0]
	if len(finderReq.Messages) != 1 || !strings.Contains(finderReq.Messages[0].TextOf(), "find A") {
		t.Errorf("finder's first request holds %d messages: %v", len(finderReq.Messages), finderReq.Messages)
	}
	if got := p.tools("FINDER", 0); !slices.Equal(got, []string{"read_file", "grep", "task"}) {
		t.Errorf("finder's tools = %v, want read_file, grep, task", got)
	}
	if got := p.tools(top, 0); !slices.Contains(got, "task") || !slices.Contains(got, "ask_user") {
		t.Errorf("top tools = %v, want task and ask_user among them", got)
	}
	for i := range p.requests["DIG"] {
		if slices.Contains(p.tools("DIG", i), "ask_user") {
			t.Errorf("a sub-agent was offered ask_user: %v", p.tools("DIG", i))
		}
	}

	st, err := session.Load(ctx, e.Setup().Store(), e.SessionID())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Messages) != 4 {
		t.Errorf("the conversation holds %d messages, want 4 (prompt, calls, results, answer)", len(st.Messages))
	}
	if len(st.Subagents) != 3 {
		t.Fatalf("stored %d sub-agent transcripts, want 3", len(st.Subagents))
	}
	for _, tr := range st.Subagents {
		if tr.End == nil || tr.End.Reason != "completed" || len(tr.Messages) < 2 {
			t.Errorf("transcript %s/%s: end %+v, %d messages", tr.Agent, tr.ParentCallID, tr.End, len(tr.Messages))
		}
	}
	// subagent_start and subagent_stop fired once per sub-agent, naming it
	// and the call that started it; session_start fired for the top run
	// only.
	logged, err := os.ReadFile(hookLog)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(logged))
	for dec.More() {
		var in struct {
			Event     string `json:"hook_event_name"`
			AgentID   string `json:"agent_id"`
			AgentType string `json:"agent_type"`
		}
		if err := dec.Decode(&in); err != nil {
			t.Fatalf("hook inputs %q: %v", logged, err)
		}
		count[in.Event+" "+in.AgentType+" "+in.AgentID]++
	}
	want := map[string]int{"session_start  ": 1, "subagent_start finder c1": 1, "subagent_stop finder c1": 1,
		"subagent_start dig c2": 1, "subagent_stop dig c2": 1, "subagent_start dig c1": 1, "subagent_stop dig c1": 1}
	if !maps.Equal(count, want) {
		t.Errorf("hooks fired %v, want %v", count, want)
	}

	var md bytes.Buffer
	if err := session.ExportMarkdown(&md, st); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Sub-agent finder (completed", "Sub-agent dig (completed", "A is in a.go", "dug"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the Markdown export lacks %q:\n%s", want, md.String())
		}
	}
}

// AGENT-4: depth is limited on every path. With max depth 1 a sub-agent
// gets no task tool; a process already that deep (REIN_AGENT_DEPTH, set
// for an action's or MCP server's rein) offers none either, and one deeper
// refuses to start.
func TestSubagentDepth_AGENT4(t *testing.T) {
	p := &routed{scripts: map[string][]llmtest.Reply{}}
	top := strings.SplitN(agent.DefaultInstructions, "\n", 2)[0]
	p.scripts[top] = []llmtest.Reply{
		{ToolCalls: []llm.ToolUse{call("c1", "task", map[string]string{"agent": "finder", "prompt": "find"})}},
		{Text: "ok"},
	}
	p.scripts["FINDER"] = []llmtest.Reply{{Text: "found"}}
	e := newEngine(t, p, map[string]string{"finder": finderAgent}, map[string]string{"REIN_SUBAGENT_MAX_DEPTH": "1"})
	for _, err := range e.Submit(ctx, "", "go", nil) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := p.tools("FINDER", 0); slices.Contains(got, "task") {
		t.Errorf("at the depth limit, finder was offered task: %v", got)
	}

	p2 := &routed{scripts: map[string][]llmtest.Reply{top: {{Text: "ok"}}}}
	e2 := newEngine(t, p2, map[string]string{"finder": finderAgent}, map[string]string{runner.DepthEnv: "3"})
	for _, err := range e2.Submit(ctx, "", "go", nil) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := p2.tools(top, 0); slices.Contains(got, "task") {
		t.Errorf("a rein already 3 deep offers task: %v", got)
	}

	home := t.TempDir()
	getenv := func(k string) string {
		return map[string]string{"HOME": home, runner.DepthEnv: "4", "REIN_SANDBOX": "off"}[k]
	}
	l, err := workspace.Load(workspace.Options{WorkDir: t.TempDir(), Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	_, err = runner.NewSetup(runner.Config{Loaded: l, Store: session.NewMemStore(), Getenv: getenv,
		Resolve: func(*registry.Registry, string) (*runner.Model, error) { return nil, nil }})
	if err == nil || !strings.Contains(err.Error(), "4 deep") {
		t.Errorf("a rein 4 deep started (err %v)", err)
	}
}

// AGENT-4: cancelling the parent cancels the children, and every call
// still gets its result.
func TestSubagentCancel_AGENT4(t *testing.T) {
	p := &routed{scripts: map[string][]llmtest.Reply{}}
	top := strings.SplitN(agent.DefaultInstructions, "\n", 2)[0]
	p.scripts[top] = []llmtest.Reply{{ToolCalls: []llm.ToolUse{
		call("c1", "task", map[string]string{"agent": "dig", "prompt": "one"}),
		call("c2", "task", map[string]string{"agent": "dig", "prompt": "two"})}}}
	p.scripts["DIG"] = []llmtest.Reply{{Text: "dig", Hang: true}}
	e := newEngine(t, p, map[string]string{"dig": digAgent}, nil)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var last agent.Event
	started := 0
	for ev := range e.Submit(cctx, "", "go", nil) {
		if ev.Type == agent.EventSubagentStart {
			if started++; started == 2 {
				time.AfterFunc(10*time.Millisecond, cancel)
			}
		}
		last = ev
	}
	if last.Type != agent.EventDone || last.Done.Reason != agent.ReasonCancelled {
		t.Fatalf("last event %s %+v, want done cancelled", last.Type, last.Done)
	}
	st, err := session.Load(ctx, e.Setup().Store(), e.SessionID())
	if err != nil {
		t.Fatal(err)
	}
	results := st.Messages[len(st.Messages)-1].ToolResults()
	if len(results) != 2 {
		t.Fatalf("%d results for 2 task calls: %+v", len(results), st.Messages)
	}
	for _, r := range results {
		if !r.IsError {
			t.Errorf("a cancelled task's result is not an error: %+v", r)
		}
	}
}

// AGENT-4, PERM-3: a sub-agent's permission question reaches the run's
// approver, and parallel sub-agents ask one at a time.
func TestSubagentPermission_AGENT4(t *testing.T) {
	p := &routed{scripts: map[string][]llmtest.Reply{}}
	top := strings.SplitN(agent.DefaultInstructions, "\n", 2)[0]
	p.scripts[top] = []llmtest.Reply{
		{ToolCalls: []llm.ToolUse{call("c1", "task", map[string]string{"agent": "dig", "prompt": "one"}),
			call("c2", "task", map[string]string{"agent": "dig", "prompt": "two"})}},
		{Text: "ok"},
	}
	p.scripts["DIG"] = []llmtest.Reply{
		{ToolCalls: []llm.ToolUse{call("d1", "bash", map[string]string{"command": "echo hi > out.txt"})}},
		{Text: "dug"},
	}
	e := newEngine(t, p, map[string]string{"dig": digAgent}, nil)
	var mu sync.Mutex
	open, most, asked := 0, 0, 0
	approver := permission.ApproverFunc(func(_ context.Context, pr permission.Prompt) (permission.Verdict, error) {
		if pr.Request.Agent != "dig" {
			t.Errorf("the question names agent %q, want dig", pr.Request.Agent)
		}
		mu.Lock()
		open++
		asked++
		most = max(most, open)
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		open--
		mu.Unlock()
		return permission.Verdict{Answer: permission.AnswerDeny, Message: "not now"}, nil
	})
	for _, err := range e.Submit(ctx, "", "go", approver) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if asked != 2 || most != 1 {
		t.Errorf("asked %d questions, at most %d at once; want 2, one at a time", asked, most)
	}
}
