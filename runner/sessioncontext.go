package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/reinhq/rein/session"
)

// SessionContext is what the next run of sess by caller would offer its
// model before the conversation — the system prompt and the tools, with
// where each comes from — built as a run builds them: the session's
// workspace, the caller's rules and the session's model (SPEC API-10, the
// console's run inspector; CLI-5 is the same dry run on the command
// line). No model is called, no hook runs and nothing is stored; the MCP
// servers a run would start are started, as their tools are part of it.
// A session whose model cannot be chosen wraps session.ErrInvalid.
func (s *Service) SessionContext(ctx context.Context, sess *session.Session, caller string) (*DryRun, error) {
	setup, err := s.setup(ctx, &session.Run{ID: "context", SessionID: sess.ID, Caller: caller})
	if err != nil {
		if errors.Is(err, session.ErrNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: session %s: %v", session.ErrInvalid, sess.ID, err)
	}
	defer setup.Close()
	c := setup.NewConversation()
	defer c.Close()
	// A new conversation needs a message to make its first request; only
	// the request's system prompt and tools are this context.
	d, err := c.DryRun(ctx, "(the next message)")
	if errors.Is(err, ErrNoModel) {
		return nil, fmt.Errorf("%w: session %s has no model: give the server a default model or the session one", session.ErrInvalid, sess.ID)
	}
	return d, err
}
