package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/builtin"
)

// ask_user on a server (SPEC PERM-3's channel, for questions): the
// question goes out as a question event — stored with the session's
// durable events, so a client that connects later sees it — and the run
// waits for POST /runs/{id}/questions/{call_id} ([Service.AnswerQuestion])
// until the permission questions' timeout (permissions.ask_timeout).

// callAsker asks a run's user a question on behalf of the ask_user call
// callID, waiting at most timeout; errNoAnswer when nobody answered.
type callAsker interface {
	askCall(ctx context.Context, callID, question string, options []string, timeout time.Duration) (string, error)
}

// errNoAnswer: nobody answered a question in time.
var errNoAnswer = errors.New("nobody answered in time")

// remoteAskTool is ask_user asking through a callAsker. Its spec is the
// built-in tool's, byte for byte: the tool list (and the prompt cache)
// does not change.
type remoteAskTool struct {
	spec    llm.ToolSpec
	asker   callAsker
	timeout time.Duration
}

func newRemoteAskTool(a callAsker, timeout time.Duration) *remoteAskTool {
	if timeout <= 0 {
		timeout = permission.DefaultAskTimeout
	}
	return &remoteAskTool{spec: builtin.NewAskUser(nil).Spec(), asker: a, timeout: timeout}
}

// Spec implements tool.Tool.
func (t *remoteAskTool) Spec() llm.ToolSpec { return t.spec }

// Meta is the built-in ask_user's.
func (t *remoteAskTool) Meta() tool.Meta {
	if m, ok := builtin.NewAskUser(nil).(tool.MetaTool); ok {
		return m.Meta()
	}
	return tool.Meta{ReadOnly: true, Category: tool.CategorySession}
}

// Run implements tool.Tool.
func (t *remoteAskTool) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in struct {
		Question string   `json:"question"`
		Options  []string `json:"options"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return tool.Errorf("invalid input: %v", err), nil
	}
	q := strings.TrimSpace(in.Question)
	if q == "" {
		return tool.Errorf("question is empty"), nil
	}
	ans, err := t.asker.askCall(ctx, call.ID, q, in.Options, t.timeout)
	switch {
	case errors.Is(err, errNoAnswer):
		return tool.Errorf("nobody answered the question within %s; proceed with your best judgement and state the assumptions you make", t.timeout), nil
	case err != nil:
		return tool.Errorf("the question could not be asked (%v); proceed with your best judgement and state your assumptions", err), nil
	}
	if ans = strings.TrimSpace(ans); ans == "" {
		return tool.Text("The user gave no answer; proceed with your best judgement."), nil
	}
	return tool.Text("The user answered: " + ans), nil
}

// askCall implements callAsker: it opens the question, publishes the
// question event, and waits for the answer, the timeout or ctx.
func (a *remoteApprover) askCall(ctx context.Context, callID, question string, options []string, timeout time.Duration) (string, error) {
	if a.publish == nil {
		return "", errors.New("this run cannot publish questions")
	}
	ch := a.expectQuestion(callID)
	defer func() {
		a.mu.Lock()
		delete(a.questions, callID)
		a.mu.Unlock()
	}()
	ev := agent.Event{Type: agent.EventQuestion, CallID: callID, Question: question, Options: options}
	if err := a.publish(ev); err != nil {
		return "", fmt.Errorf("publishing the question: %w", err)
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case ans := <-ch:
		return ans, nil
	case <-t.C:
		return "", errNoAnswer
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// expectQuestion opens the question of callID.
func (a *remoteApprover) expectQuestion(callID string) chan string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ch, ok := a.questions[callID]
	if !ok {
		ch = make(chan string, 1)
		a.questions[callID] = ch
	}
	return ch
}

// answerQuestion delivers answer to the pending question of callID; false
// when none is pending or it was answered already.
func (a *remoteApprover) answerQuestion(callID, answer string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	ch, ok := a.questions[callID]
	if !ok {
		return false
	}
	select {
	case ch <- answer:
		return true
	default:
		return false
	}
}
