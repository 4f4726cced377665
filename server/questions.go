package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/session"
)

// QuestionAnswerer is the part of a [Runtime] that answers the ask_user
// questions of runs (the question event). The runner's service has it; a
// Runtime without it has no question pending, ever.
type QuestionAnswerer interface {
	// AnswerQuestion answers (or declines) the pending ask_user question
	// of callID in run runID; none pending is an error wrapping
	// session.ErrNotFound.
	AnswerQuestion(ctx context.Context, runID, callID, answer string, declined bool) error
}

type questionInput struct {
	ID     string `path:"id" maxLength:"128" pattern:"^[A-Za-z0-9_-][A-Za-z0-9._-]*$" doc:"Run id."`
	CallID string `path:"call_id" maxLength:"256" doc:"The call_id of the question event."`
	Body   api.QuestionAnswer
}

// registerQuestions registers POST /runs/{id}/questions/{call_id}.
func (s *Server) registerQuestions() {
	op := s.operation(http.MethodPost, "/runs/{id}/questions/{call_id}", "answer-question", "Answer a question the model asked (ask_user)", http.StatusNoContent, http.StatusNotFound)
	op.Tags = []string{"runs"}
	op.Description = fmt.Sprintf("Answers the question event of call_id: the model's ask_user call waits for it (SPEC PERM-3's "+
		"channel, for questions). A question nobody answers within %s ends with a result telling the model that nobody answered "+
		"and to go on with its best judgement; no pending question for the call (answered, timed out, the run ended) is a 404.",
		s.cfg.AskTimeout)
	huma.Register(s.api, op, s.answerQuestion)
}

func (s *Server) answerQuestion(ctx context.Context, in *questionInput) (*struct{}, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := s.ownRun(ctx, c, in.ID); err != nil {
		return nil, err
	}
	if in.Body.Declined && in.Body.Answer != "" {
		return nil, huma.Error422UnprocessableEntity("a declined question has no answer: send either declined: true or an answer, not both")
	}
	qa, ok := s.cfg.Runtime.(QuestionAnswerer)
	if ok {
		err = qa.AnswerQuestion(ctx, in.ID, in.CallID, in.Body.Answer, in.Body.Declined)
	}
	if !ok || errors.Is(err, session.ErrNotFound) {
		return nil, huma.Error404NotFound(fmt.Sprintf("run %s has no pending question for call %q: it was answered, timed out, or the run ended (see the run's tool_end event for the call)", in.ID, in.CallID))
	}
	if err != nil {
		return nil, s.fail(ctx, "answering the question", err)
	}
	return nil, nil
}
