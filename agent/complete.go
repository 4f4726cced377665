package agent

import (
	"context"
	"errors"
)

// Complete runs in to its end and returns the done result: the
// non-streaming entry point of SPEC LOOP-1. It consumes the event stream of
// [Agent.Run] — there is no second code path — and drops the other events;
// callers that want them (text as it streams, tool calls, permission
// questions) range over Run instead. The error is the one Run yields with
// done (a failure that is not the model's); a run that ended for any other
// reason (max_turns, cancelled, refusal, …) returns its done with a nil
// error, so check [DoneEvent.Reason].
func (a *Agent) Complete(ctx context.Context, in Input) (*DoneEvent, error) {
	var done *DoneEvent
	var err error
	for ev, e := range a.Run(ctx, in) {
		if ev.Type == EventDone {
			done, err = ev.Done, e
		}
	}
	if done == nil {
		return nil, errors.New("agent: the run ended without a done event")
	}
	return done, err
}
