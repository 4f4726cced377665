package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/server"
	"github.com/reinhq/rein/session"
)

// serviceRuntime is the runner's service as the server's Runtime.
type serviceRuntime struct{ *runner.Service }

// Submit implements server.Runtime.
func (r serviceRuntime) Submit(ctx context.Context, s server.Submission) (*session.Run, error) {
	run, err := r.Service.Submit(ctx, runner.Submission{SessionID: s.SessionID, Caller: s.Caller, Text: s.Text,
		Model: s.Model, MaxTurns: s.MaxTurns, PermissionMode: s.PermissionMode, Agent: s.Agent})
	if errors.Is(err, runner.ErrClosed) {
		return nil, fmt.Errorf("%w (%v)", server.ErrUnavailable, err)
	}
	return run, err
}
