package runner

import (
	"context"
	"fmt"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/workspace"
)

// A session's own permission mode (SPEC PERM-7) on a server:
// session.Session.PermissionMode, set when it is created and changed with
// PATCH /sessions/{id}. Every run of the session uses it unless its
// message names a mode; a plan approved in a run of a session in plan
// mode switches the session to the mode the approval chose, so its next
// runs carry the plan out.

// sessionMode adds the session's permission mode to a run's flags when its
// message names none. A stored mode that is unknown, or bypass (which
// only a message may ask for, where the server allows it), fails the run
// with what to do.
func sessionMode(flags map[string]string, sess *session.Session) error {
	if sess.PermissionMode == "" || flags[workspace.PermissionMode] != "" {
		return nil
	}
	m, err := permission.ParseMode(sess.PermissionMode)
	if err == nil && m == permission.ModeBypass {
		err = fmt.Errorf("bypass is not a session mode")
	}
	if err != nil {
		return fmt.Errorf("session %s: its permission mode %q: %v; set another with PATCH /sessions/%s", sess.ID, sess.PermissionMode, err, sess.ID)
	}
	flags[workspace.PermissionMode] = string(m)
	return nil
}

// planDecided stores the mode a plan was approved into as the session's
// when the session is in plan mode (a message that asked for plan mode
// leaves the session's own mode alone). Failing to store it is logged:
// the run goes on in the approved mode, and the next run would start in
// plan mode again.
func (s *Service) planDecided(ctx context.Context, run *session.Run, p *agent.PlanEvent) {
	if p == nil || p.Status != agent.PlanApproved || p.Mode == "" {
		return
	}
	err := func() error {
		sess, err := s.cfg.Sessions.Get(ctx, run.SessionID)
		if err != nil || sess.PermissionMode != string(permission.ModePlan) {
			return err
		}
		sess.PermissionMode = p.Mode
		return s.cfg.Sessions.Update(ctx, sess)
	}()
	if err != nil {
		s.cfg.Logger.Warn("the session's permission mode after its plan was approved could not be stored",
			"session_id", run.SessionID, "run_id", run.ID, "mode", p.Mode, "err", err)
	}
}
