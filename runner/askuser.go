package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reinhq/rein/agent"
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
// callID, waiting at most timeout; a builtin.NoAnswerError when nobody
// answered.
type callAsker interface {
	askCall(ctx context.Context, callID, question string, options []string, timeout time.Duration) (string, error)
}

// timedAsker is a callAsker with its timeout: the builtin.CallAsker of
// the server's ask_user, which is the built-in tool asking through it.
type timedAsker struct {
	a       callAsker
	timeout time.Duration
}

// AskCall implements builtin.CallAsker.
func (t timedAsker) AskCall(ctx context.Context, callID, question string, options []string) (string, error) {
	return t.a.askCall(ctx, callID, question, options, t.timeout)
}

// newRemoteAskTool is ask_user asking through a: the built-in tool, so the
// tool list (and the prompt cache) does not change.
func newRemoteAskTool(a callAsker, timeout time.Duration) tool.Tool {
	if timeout <= 0 {
		timeout = permission.DefaultAskTimeout
	}
	return builtin.NewAskUserByCall(timedAsker{a: a, timeout: timeout})
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
		if ans.declined {
			return "", builtin.ErrDeclined
		}
		return ans.answer, nil
	case <-t.C:
		return "", builtin.NoAnswerError{After: timeout}
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// questionReply is the user's answer to an ask_user question, or a
// decline (the terminal UI's Esc, the API's "declined": true).
type questionReply struct {
	answer   string
	declined bool
}

// expectQuestion opens the question of callID.
func (a *remoteApprover) expectQuestion(callID string) chan questionReply {
	a.mu.Lock()
	defer a.mu.Unlock()
	ch, ok := a.questions[callID]
	if !ok {
		ch = make(chan questionReply, 1)
		a.questions[callID] = ch
	}
	return ch
}

// answerQuestion delivers answer to the pending question of callID; false
// when none is pending or it was answered already.
func (a *remoteApprover) answerQuestion(callID string, answer questionReply) bool {
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
