package runner

import (
	"context"
	"sync"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/permission"
)

// remoteApprover puts a run's permission questions to whoever answers over
// the API (SPEC PERM-3): the permission_request event reaches SSE clients,
// and [Service.Answer] delivers the answer. Without an answer the gate's
// timeout denies, recorded as decided by "timeout".
type remoteApprover struct {
	mu      sync.Mutex
	pending map[string]chan permission.Verdict // by call id
	// questions are the ask_user questions waiting (askuser.go), by call
	// id; publish sends a question event into the run's stream (set by
	// the run once its stream exists).
	questions map[string]chan questionReply
	publish   func(agent.Event) error
}

func newRemoteApprover() *remoteApprover {
	return &remoteApprover{pending: map[string]chan permission.Verdict{}, questions: map[string]chan questionReply{}}
}

// Approve implements permission.Approver: it waits for the answer to the
// call's question or for ctx.
func (a *remoteApprover) Approve(ctx context.Context, p permission.Prompt) (permission.Verdict, error) {
	id := p.Request.CallID
	ch := a.expect(id)
	defer func() {
		a.mu.Lock()
		delete(a.pending, id)
		a.mu.Unlock()
	}()
	select {
	case v := <-ch:
		return v, nil
	case <-ctx.Done():
		return permission.Verdict{Answer: permission.AnswerDeny, Message: "no answer"}, ctx.Err()
	}
}

// expect opens the question of callID, so an answer that arrives before
// Approve is called (the permission_request event is published first) is
// kept for it.
func (a *remoteApprover) expect(callID string) chan permission.Verdict {
	a.mu.Lock()
	defer a.mu.Unlock()
	ch, ok := a.pending[callID]
	if !ok {
		ch = make(chan permission.Verdict, 1)
		a.pending[callID] = ch
	}
	return ch
}

// answer delivers v to the pending question of callID; false when none is
// pending.
func (a *remoteApprover) answer(callID string, v permission.Verdict) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	ch, ok := a.pending[callID]
	if !ok {
		return false
	}
	select {
	case ch <- v: // kept until Approve takes it
		return true
	default: // already answered
		return false
	}
}
