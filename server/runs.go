package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/session"
)

type messageInput struct {
	ID string `path:"id" maxLength:"128" pattern:"^[A-Za-z0-9_-][A-Za-z0-9._-]*$" doc:"Session id."`
	// TraceParent has no pattern: a malformed one is ignored, not refused.
	TraceParent string `header:"traceparent" doc:"A W3C traceparent (00-<trace id>-<parent id>-<flags>): the run's trace (rein.run and its spans) joins this trace as a child of that span. A malformed one is ignored."`
	Body        api.Message
}

type acceptedOutput struct {
	Body api.Accepted
}

type runOutput struct {
	Body api.Run
}

type runListOutput struct {
	Body api.RunList
}

type runIDInput struct {
	ID string `path:"id" maxLength:"128" pattern:"^[A-Za-z0-9_-][A-Za-z0-9._-]*$" doc:"Run id."`
}

type answerInput struct {
	ID     string `path:"id" maxLength:"128" pattern:"^[A-Za-z0-9_-][A-Za-z0-9._-]*$" doc:"Run id."`
	CallID string `path:"call_id" maxLength:"256" doc:"The call_id of the permission_request event."`
	Body   api.PermissionAnswer
}

func (s *Server) registerRuns() {
	op := s.operation(http.MethodPost, "/sessions/{id}/messages", "send-message", "Send a message: queue a run", http.StatusAccepted, http.StatusNotFound, http.StatusConflict, http.StatusRequestEntityTooLarge)
	op.Tags = []string{"runs"}
	op.Description = "The run is stored as queued before the answer (202): it will run, in submission order after the " +
		"session's earlier runs. Follow it on GET /sessions/{id}/events or poll GET /runs/{run_id}. " +
		"Images go with the text (images): an image over 5 MiB, or images over 20 MiB in all, is 413; one whose " +
		"bytes are no PNG, JPEG, GIF or WebP is 415; a declared media_type the bytes contradict, bad base64 or " +
		"more than 20 images is 422."
	op.MaxBodyBytes = s.messageBodyBytes()
	huma.Register(s.api, op, s.sendMessage)

	op = s.operation(http.MethodGet, "/sessions/{id}/runs", "list-runs", "List a session's runs, oldest first", http.StatusOK, http.StatusNotFound)
	op.Tags = []string{"runs"}
	huma.Register(s.api, op, s.listRuns)

	op = s.operation(http.MethodGet, "/runs/{id}", "get-run", "Get a run", http.StatusOK, http.StatusNotFound)
	op.Tags = []string{"runs"}
	huma.Register(s.api, op, s.getRun)

	op = s.operation(http.MethodPost, "/runs/{id}/cancel", "cancel-run", "Cancel a queued or running run", http.StatusOK, http.StatusNotFound, http.StatusConflict)
	op.Tags = []string{"runs"}
	op.Description = "A run that already ended cannot be cancelled (409)."
	huma.Register(s.api, op, s.cancelRun)

	op = s.operation(http.MethodPost, "/runs/{id}/permissions/{call_id}", "answer-permission", "Answer a permission question", http.StatusNoContent, http.StatusNotFound)
	op.Tags = []string{"runs"}
	op.Description = fmt.Sprintf("Answers the permission_request event of call_id (SPEC PERM-3). A question nobody "+
		"answers within %s is denied; no pending question for the call is a 404. always keeps a rule that allows "+
		"calls like this one from now on, for the caller in the workspace's directory only: it is kept in the server's "+
		"store, never in the workspace's files, and applies to no other caller nor to the CLI. The question of an "+
		"exit_plan_mode call is a plan to approve (SPEC PERM-7, the plan event): once approves it into default mode, "+
		"always into accept-edits for the rest of the run (no rule is kept), deny with a message sends it back to the "+
		"model as feedback.", s.cfg.AskTimeout)
	huma.Register(s.api, op, s.answerPermission)
}

func (s *Server) sendMessage(ctx context.Context, in *messageInput) (*acceptedOutput, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := s.ownSession(ctx, c, in.ID); err != nil {
		return nil, err
	}
	imgs, err := decodeImages(in.Body.Images)
	if err != nil {
		return nil, err
	}
	r, err := s.cfg.Runtime.Submit(ctx, session.Submission{SessionID: in.ID, Caller: c, Text: in.Body.Text, Images: imgs,
		Model: in.Body.Model, PermissionMode: in.Body.PermissionMode, MaxTurns: in.Body.MaxTurns, Agent: in.Body.Agent,
		TraceParent: traceParent(in.TraceParent)})
	if err != nil {
		return nil, s.fail(ctx, "queueing the run", err)
	}
	return &acceptedOutput{Body: api.Accepted{RunID: r.ID, SessionID: r.SessionID, Status: string(r.Status)}}, nil
}

func (s *Server) listRuns(ctx context.Context, in *sessionIDInput) (*runListOutput, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := s.ownSession(ctx, c, in.ID); err != nil {
		return nil, err
	}
	runs, err := s.cfg.Ledger.ListRuns(ctx, session.RunFilter{SessionID: in.ID, Caller: c})
	if err != nil {
		return nil, s.fail(ctx, "listing runs", err)
	}
	return &runListOutput{Body: api.RunList{Items: api.FromRuns(runs)}}, nil
}

func (s *Server) getRun(ctx context.Context, in *runIDInput) (*runOutput, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	r, err := s.ownRun(ctx, c, in.ID)
	if err != nil {
		return nil, err
	}
	return &runOutput{Body: api.FromRun(r)}, nil
}

func (s *Server) cancelRun(ctx context.Context, in *runIDInput) (*runOutput, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	r, err := s.ownRun(ctx, c, in.ID)
	if err != nil {
		return nil, err
	}
	if r.Status.Final() {
		return nil, huma.Error409Conflict(fmt.Sprintf("run %s already ended (%s): there is nothing to cancel", r.ID, r.Status))
	}
	r, err = s.cfg.Runtime.Cancel(ctx, in.ID)
	if err != nil {
		return nil, s.fail(ctx, "cancelling the run", err)
	}
	return &runOutput{Body: api.FromRun(r)}, nil
}

func (s *Server) answerPermission(ctx context.Context, in *answerInput) (*struct{}, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := s.ownRun(ctx, c, in.ID); err != nil {
		return nil, err
	}
	v := permission.Verdict{Answer: permission.Answer(in.Body.Answer), Message: in.Body.Message}
	if v.Answer != permission.AnswerDeny && v.Message != "" {
		return nil, invalid("body.message", v.Message, "message goes with a deny (it tells the model why): leave it out, or answer deny")
	}
	if err := s.cfg.Runtime.Answer(ctx, in.ID, in.CallID, v); err != nil {
		if errors.Is(err, session.ErrNotFound) {
			return nil, huma.Error404NotFound(fmt.Sprintf("run %s has no pending permission question for call %q: it was answered, timed out, or the run ended (see the run's permission_decision events)", in.ID, in.CallID))
		}
		return nil, s.fail(ctx, "answering the permission question", err)
	}
	return nil, nil
}

// ownRun returns the caller's run id; another caller's is not found,
// exactly like an unknown one.
func (s *Server) ownRun(ctx context.Context, caller, id string) (*session.Run, error) {
	r, err := s.cfg.Ledger.GetRun(ctx, id)
	if errors.Is(err, session.ErrNotFound) || errors.Is(err, session.ErrInvalid) || err == nil && r.Caller != caller {
		return nil, notFound("run", id, "GET /sessions/{id}/runs lists a session's runs")
	}
	if err != nil {
		return nil, s.fail(ctx, "reading the run", err)
	}
	return r, nil
}
