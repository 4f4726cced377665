package runner

import (
	"context"
	"errors"
	"iter"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/builtin"
)

// DryRun is what the first model request of a run would be, built by the
// real path without calling the model (SPEC CLI-5, `rein run --dry-run`).
type DryRun struct {
	// Request is the first request the agent loop would send: the system
	// prompt, the tools in order, the user message, the output limit and
	// the thinking budget. Its CacheKey is empty: a real run's is the id
	// of the session it creates, which a dry run does not create.
	Request *llm.Request
	// Tools are the tools of Request, in its order, with where each comes
	// from.
	Tools []DryTool
	// Skills are the names of the skills the system prompt's index lists.
	Skills []string
	// Warnings are what the run's run_start would report (PERM-5, MEM-3,
	// MCP servers that did not start or are withheld).
	Warnings []string
	// Hooks is how many hooks a real run would have registered; a dry run
	// runs none of them (they may have side effects).
	Hooks int
}

// DryTool is one tool a request offers.
type DryTool struct {
	Name   string      `json:"name"`
	Origin tool.Origin `json:"origin"`
}

// errCaptured ends a dry run at its first model call.
var errCaptured = errors.New("runner: dry run: the first request is captured, not sent")

// captureProvider is the model of a dry run: it keeps the first request it
// is sent and fails every call, so the agent loop ends there without the
// network.
type captureProvider struct {
	req *llm.Request
}

// Stream implements llm.Provider.
func (p *captureProvider) Stream(_ context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
	if p.req == nil {
		p.req = req
	}
	return func(yield func(llm.Delta, error) bool) { yield(llm.Delta{}, errCaptured) }
}

// DryRun builds the first model request a run of prompt would send in a
// new session, by running the real agent loop — the conversation's system
// prompt, tools and agent built as [Conversation.Submit] builds them —
// against a model that keeps the request and ends the run. Nothing is
// stored: no session is created, no journal, audit log or directory
// written. No hook runs: session_start and user_prompt_submit hooks may
// have side effects, and a context a user_prompt_submit hook would add is
// therefore not in the request. The MCP servers a real run starts (the
// user's, and a trusted workspace's) are started, as the tools they offer
// are part of the request; they stop with the setup ([Setup.Close]).
//
// The conversation is left as it was: DryRun works on a scratch one over
// the same setup, with the model's provider swapped for the capture.
func (c *Conversation) DryRun(ctx context.Context, prompt string) (*DryRun, error) {
	var p *llm.Message
	if prompt != "" {
		m := llm.UserText(prompt)
		p = &m
	}
	return c.DryRunMessage(ctx, p)
}

// DryRunMessage is [Conversation.DryRun] of a user message of text and
// images (SPEC LOOP-2): the request shows, and counts, the images.
func (c *Conversation) DryRunMessage(ctx context.Context, prompt *llm.Message) (*DryRun, error) {
	s := c.s
	if s.model == nil {
		return nil, ErrNoModel
	}
	capture := &captureProvider{}
	n := *s
	m := *s.model
	m.Provider = capture
	n.model = &m
	// A scratch conversation has no session whose held jobs it could
	// borrow (a Service's runs do): it gets jobs of its own, never started.
	n.cfg.heldJobs = nil
	d := &Conversation{s: &n, effort: c.effort} // no hooks: NewConversation registers them, a dry run does not
	d.tracker, d.todos = builtin.NewFileTracker(), &builtin.Todos{}
	if err := d.buildTools(); err != nil {
		return nil, err
	}
	defer func() {
		if d.kb != nil {
			_ = d.kb.Close()
		}
	}()
	d.refreshMemory()
	in := agent.Input{WorkDir: s.ws.Root, Depth: s.depth, RunID: "dry-run"}
	if prompt != nil {
		p := *prompt
		p.Role = llm.RoleUser
		in.Prompt = &p
	}
	out := &DryRun{Hooks: len(s.hookRegs)}
	var runErr error
	for ev, err := range d.Agent(nil).Run(ctx, in) {
		if ev.Type == agent.EventRunStart && ev.RunStart != nil {
			out.Warnings = ev.RunStart.Warnings
		}
		if err != nil && !errors.Is(err, errCaptured) {
			runErr = err
		}
		if ev.Type == agent.EventDone && ev.Done != nil && capture.req == nil && runErr == nil {
			runErr = errors.New(ev.Done.Error)
		}
	}
	if capture.req == nil {
		if runErr == nil {
			runErr = errors.New("the run ended before its first model call")
		}
		return nil, runErr
	}
	out.Request = capture.req
	tools := d.runTools(nil)
	for _, spec := range out.Request.Tools {
		t := DryTool{Name: spec.Name}
		if e, ok := tools.Get(spec.Name); ok {
			t.Origin = e.Origin
		}
		out.Tools = append(out.Tools, t)
	}
	if s.skillIdx != "" {
		for _, sk := range s.skills() {
			out.Skills = append(out.Skills, sk.Name)
		}
	}
	return out, nil
}
