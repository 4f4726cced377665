package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// memAudit collects hook run records.
type memAudit struct {
	mu   sync.Mutex
	recs []Record
}

func (a *memAudit) Record(_ context.Context, r Record) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recs = append(a.recs, r)
	return nil
}

func (a *memAudit) outcomes() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, r := range a.recs {
		out = append(out, r.Hook+":"+string(r.Outcome))
	}
	return out
}

// tracer is a Func hook that records its name in order and returns o.
func tracer(trace *[]string, name string, o Outcome) Func {
	return func(_ context.Context, in Input) (Outcome, error) {
		*trace = append(*trace, name)
		return o, nil
	}
}

// HOOK-3: matchers select by tool name, exactly, by regex, by Claude Code
// name or all.
func TestMatchers_HOOK3(t *testing.T) {
	cases := []struct {
		matcher string
		tools   map[string]bool
	}{
		{"", map[string]bool{"bash": true, "read_file": true, "mcp__gh__x": true}},
		{"*", map[string]bool{"bash": true, "read_file": true, "mcp__gh__x": true}},
		{"bash", map[string]bool{"bash": true, "read_file": false, "bash2": false}},
		{"Bash", map[string]bool{"bash": true, "read_file": false}},
		{"Edit|Write", map[string]bool{"edit_file": true, "write_file": true, "read_file": false}},
		// Claude Code's names come from tool.ClaudeToolNames: MultiEdit is
		// multi_edit, LS list_dir; Edit alone is edit_file, as in Claude Code.
		{"Edit|MultiEdit|Write", map[string]bool{"edit_file": true, "multi_edit": true, "write_file": true, "read_file": false}},
		{"MultiEdit", map[string]bool{"multi_edit": true, "edit_file": false}},
		{"Edit", map[string]bool{"edit_file": true, "multi_edit": false, "write_file": false}},
		{"LS|Glob|Grep", map[string]bool{"list_dir": true, "glob": true, "grep": true, "read_file": false}},
		{"TodoWrite", map[string]bool{"todo_write": true}},
		{"Task", map[string]bool{"task": true, "bash": false}},
		{"read_file|grep", map[string]bool{"read_file": true, "grep": true, "glob": false}},
		{"mcp__gh__.*", map[string]bool{"mcp__gh__x": true, "mcp__gl__x": false, "bash": false}},
		{"ba", map[string]bool{"bash": false}},
	}
	for _, c := range cases {
		for tool, want := range c.tools {
			var trace []string
			reg := NewRegistry(Options{})
			if err := reg.Register(Registration{Event: PreToolUse, Matcher: c.matcher, Hook: tracer(&trace, "h", Outcome{})}); err != nil {
				t.Fatal(err)
			}
			_, _ = reg.Fire(context.Background(), PreToolUse, Input{ToolName: tool})
			if got := len(trace) == 1; got != want {
				t.Errorf("matcher %q on %s: ran %v, want %v", c.matcher, tool, got, want)
			}
		}
	}
	// Events without a subject ignore the matcher; session_start matches the source.
	var trace []string
	reg := NewRegistry(Options{})
	_ = reg.Register(
		Registration{Event: Stop, Matcher: "Bash", Hook: tracer(&trace, "stop", Outcome{})},
		Registration{Event: SessionStart, Matcher: "resume", Hook: tracer(&trace, "resume", Outcome{})},
	)
	_, _ = reg.Fire(context.Background(), Stop, Input{})
	_, _ = reg.Fire(context.Background(), SessionStart, Input{Source: "startup"})
	_, _ = reg.Fire(context.Background(), SessionStart, Input{Source: "resume"})
	if diff := cmp.Diff([]string{"stop", "resume"}, trace); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	if err := reg.Register(Registration{Event: PreToolUse, Matcher: "(", Hook: Func(nil)}); err == nil {
		t.Error("bad regex registered")
	}
}

// HOOK-3: priority order, chained inputs, merged contexts, first block wins.
func TestFireOrderAndMerge_HOOK2(t *testing.T) {
	var trace []string
	var seen []string
	audit := &memAudit{}
	reg := NewRegistry(Options{Auditor: audit})
	rewrite := Func(func(_ context.Context, in Input) (Outcome, error) {
		trace = append(trace, "rewrite")
		return Outcome{UpdatedInput: json.RawMessage(`{"command":"ls -la"}`), AdditionalContext: "ctx1"}, nil
	})
	look := Func(func(_ context.Context, in Input) (Outcome, error) {
		trace = append(trace, "look")
		seen = append(seen, string(in.ToolInput))
		return Outcome{AdditionalContext: "ctx2", SystemMessage: "m", Permission: "ask"}, nil
	})
	err := reg.Register(
		Registration{Name: "late", Event: PreToolUse, Priority: 10, Hook: tracer(&trace, "late", Outcome{})},
		Registration{Name: "block", Event: PreToolUse, Priority: 5, Hook: tracer(&trace, "block", Outcome{Decision: DecisionBlock, Reason: "no"})},
		Registration{Name: "look", Event: PreToolUse, Priority: 1, Hook: look},
		Registration{Name: "rewrite", Event: PreToolUse, Priority: -1, Hook: rewrite},
		Registration{Name: "allow", Event: PreToolUse, Priority: 1, Hook: tracer(&trace, "allow", Outcome{Permission: "allow"})},
	)
	if err != nil {
		t.Fatal(err)
	}
	o, err := reg.Fire(context.Background(), PreToolUse, toolInput("bash", "ls"))
	if err != nil {
		t.Fatal(err)
	}
	want := Outcome{Decision: DecisionBlock, Reason: "no", UpdatedInput: json.RawMessage(`{"command":"ls -la"}`),
		AdditionalContext: "ctx1\nctx2", SystemMessage: "m", Permission: "ask"}
	if diff := cmp.Diff(want, o); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"rewrite", "look", "allow", "block"}, trace); diff != "" {
		t.Errorf("order -want +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{`{"command":"ls -la"}`}, seen); diff != "" {
		t.Errorf("chained input -want +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"rewrite:continue", "look:continue", "allow:continue", "block:block"}, audit.outcomes()); diff != "" {
		t.Errorf("audit -want +got:\n%s", diff)
	}
}

// HOOK-2: observers cannot block; their reason becomes a note.
func TestObserverCannotBlock_HOOK2(t *testing.T) {
	var trace []string
	reg := NewRegistry(Options{})
	_ = reg.Register(
		Registration{Event: SessionEnd, Hook: tracer(&trace, "a", Outcome{Decision: DecisionBlock, Reason: "nope"})},
		Registration{Event: SessionEnd, Hook: tracer(&trace, "b", Outcome{})},
	)
	o, _ := reg.Fire(context.Background(), SessionEnd, Input{})
	if o.Blocked() || o.SystemMessage != "nope" || len(trace) != 2 {
		t.Errorf("got %+v after %v", o, trace)
	}
	if !reg.Has(SessionEnd) || reg.Has(Stop) {
		t.Error("Has is wrong")
	}
	var nilReg *Registry
	if o, err := nilReg.Fire(context.Background(), Stop, Input{}); err != nil || o.Blocked() || nilReg.Has(Stop) {
		t.Error("a nil registry is not empty")
	}
}

// HOOK-3: a failing hook is logged, audited and skipped, unless it fails
// closed; a hook that ignores its context is abandoned at its timeout.
func TestFailures_HOOK3(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		audit := &memAudit{}
		release := make(chan struct{})
		reg := NewRegistry(Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Auditor: audit, DefaultTimeout: 10 * time.Second})
		boom := Func(func(context.Context, Input) (Outcome, error) { return Outcome{}, errors.New("boom") })
		panics := Func(func(context.Context, Input) (Outcome, error) { panic("oh no") })
		hangs := Func(func(context.Context, Input) (Outcome, error) { <-release; return Outcome{}, nil })
		var trace []string
		_ = reg.Register(
			Registration{Name: "boom", Event: PreToolUse, Hook: boom},
			Registration{Name: "panics", Event: PreToolUse, Hook: panics},
			Registration{Name: "hangs", Event: PreToolUse, Hook: hangs},
			Registration{Name: "ok", Event: PreToolUse, Hook: tracer(&trace, "ok", Outcome{AdditionalContext: "fine"})},
			Registration{Name: "guard", Event: Stop, OnFailure: FailBlock, Timeout: time.Second, Hook: hangs},
			Registration{Name: "strict", Event: PreToolUse, Matcher: "edit_file", OnFailure: FailBlock, Hook: boom},
		)
		start := time.Now()
		o, err := reg.Fire(context.Background(), PreToolUse, toolInput("bash", "ls"))
		if err != nil || o.Blocked() || o.AdditionalContext != "fine" {
			t.Errorf("skipping failures: %+v, %v", o, err)
		}
		if waited := time.Since(start); waited != 10*time.Second {
			t.Errorf("waited %v on the hanging hook, want its 10s timeout", waited)
		}
		o, _ = reg.Fire(context.Background(), PreToolUse, Input{ToolName: "edit_file"})
		if !o.Blocked() || !strings.Contains(o.Reason, "hook strict failed (boom)") {
			t.Errorf("fail-closed guard: %+v", o)
		}
		o, _ = reg.Fire(context.Background(), Stop, Input{})
		if !o.ForceContinue || !strings.Contains(o.Reason, "hook guard failed") {
			t.Errorf("fail-closed stop guard: %+v", o)
		}
		close(release)
		synctest.Wait()
		want := []string{"boom:error", "panics:error", "hangs:timeout", "ok:continue",
			"boom:error", "panics:error", "hangs:timeout", "ok:continue", "strict:error", "guard:timeout"}
		if diff := cmp.Diff(want, audit.outcomes()); diff != "" {
			t.Errorf("audit -want +got:\n%s", diff)
		}
		for _, s := range []string{"hook=boom", "hook panicked: oh no", "hook=hangs", "hook failed; skipped", "blocking (on_failure: block)"} {
			if !strings.Contains(logs.String(), s) {
				t.Errorf("log lacks %q:\n%s", s, logs.String())
			}
		}
	})
}

func TestFireInterrupted_HOOK3(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	audit := &memAudit{}
	reg := NewRegistry(Options{Auditor: audit})
	_ = reg.Register(Registration{Name: "c", Event: PreToolUse, Hook: Func(func(ctx context.Context, _ Input) (Outcome, error) {
		cancel()
		<-ctx.Done()
		return Outcome{}, ctx.Err()
	})})
	if _, err := reg.Fire(ctx, PreToolUse, Input{}); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if diff := cmp.Diff([]string{"c:interrupted"}, audit.outcomes()); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

func TestRegisterErrors_HOOK3(t *testing.T) {
	reg := NewRegistry(Options{})
	for _, r := range []Registration{
		{Event: "PreToolUse", Hook: Func(nil)},
		{Event: "nope", Hook: Func(nil)},
		{Event: PreToolUse},
		{Event: PreToolUse, OnFailure: "explode", Hook: Func(nil)},
	} {
		if err := reg.Register(r); err == nil {
			t.Errorf("Register(%+v) succeeded", r)
		}
	}
	if reg.Has(PreToolUse) {
		t.Error("a failed Register added hooks")
	}
}

// HOOK-2: a prompt rewrite chains into the next hook.
func TestPromptRewrite_HOOK2(t *testing.T) {
	reg := NewRegistry(Options{})
	var seen string
	_ = reg.Register(
		Registration{Event: UserPromptSubmit, Hook: Func(func(context.Context, Input) (Outcome, error) {
			return Outcome{UpdatedInput: json.RawMessage(`"fix the bug in main.go"`)}, nil
		})},
		Registration{Event: UserPromptSubmit, Hook: Func(func(_ context.Context, in Input) (Outcome, error) {
			seen = in.Prompt
			return Outcome{}, nil
		})},
	)
	_, _ = reg.Fire(context.Background(), UserPromptSubmit, Input{Prompt: "fix it"})
	if seen != "fix the bug in main.go" {
		t.Errorf("second hook saw %q", seen)
	}
}
