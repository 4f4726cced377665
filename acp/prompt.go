package acp

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/attachment"
	"github.com/reinhq/rein/llm"
)

// maxPromptText bounds the text of one prompt — its text blocks and
// embedded resources together. A client that wants more in context links
// the file (resource_link) and the model reads what it needs.
const maxPromptText = 2 << 20

// Prompt runs one user message in the session and streams its events as
// session updates; it answers once every update of the turn is sent, with
// the run's stop reason (cancelled after session/cancel).
func (a *acpAgent) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	l := a.get(string(p.SessionId))
	if l == nil {
		return sdk.PromptResponse{}, unknownSession(string(p.SessionId))
	}
	msg, err := message(p.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(err.Error())
	}
	if !l.run.TryLock() {
		return sdk.PromptResponse{}, sdk.NewInvalidRequest(fmt.Sprintf("session %s is running a prompt; wait for its answer or send session/cancel", l.id))
	}
	defer l.run.Unlock()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	l.mu.Lock()
	l.cancel = cancel
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.cancel = nil
		l.mu.Unlock()
	}()

	// Updates go out even after a cancel: the client waits for them
	// before the answer (the SDK orders them ahead of it).
	send := context.WithoutCancel(ctx)
	mode := l.mode()
	tr := newTranslator(l.conv.Setup().Workspace().Root)
	tr.tools = l.conv.Tools()
	if m := l.conv.Setup().Model(); m != nil {
		tr.window = m.Caps.ContextWindow
	}
	_, tr.cost = l.conv.Usage()
	var done *agent.DoneEvent
	var runErr error
	for ev, err := range l.conv.SubmitMessage(runCtx, "", msg, approver{conn: a.conn, sessionID: l.id, stop: cancel}) {
		if err != nil {
			runErr = err
		}
		for _, u := range tr.updates(ev) {
			if err := a.conn.SessionUpdate(send, sdk.SessionNotification{SessionId: p.SessionId, Update: u}); err != nil {
				cancel()
				return sdk.PromptResponse{}, err
			}
		}
		if ev.Type == agent.EventDone && ev.Subagent == nil {
			done = ev.Done
		}
	}
	if now := l.mode(); now != mode { // exit_plan_mode's approval changed it
		u := sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{CurrentModeId: sdk.SessionModeId(now)}}
		if err := a.conn.SessionUpdate(send, sdk.SessionNotification{SessionId: p.SessionId, Update: u}); err != nil {
			return sdk.PromptResponse{}, err
		}
	}
	if runCtx.Err() != nil && ctx.Err() == nil {
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled, Usage: usage(done)}, nil
	}
	if done == nil {
		if runErr == nil {
			runErr = fmt.Errorf("the run ended without a result")
		}
		return sdk.PromptResponse{}, sdk.NewInternalError(runErr.Error())
	}
	stop, err := stopReason(done)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	return sdk.PromptResponse{StopReason: stop, Usage: usage(done)}, nil
}

// stopReason maps the run's end to the protocol's stop reason; a run that
// failed (an error, a timeout, a budget) is an error saying why.
func stopReason(d *agent.DoneEvent) (sdk.StopReason, error) {
	switch d.Reason {
	case agent.ReasonCompleted, agent.ReasonPermissionDenied:
		return sdk.StopReasonEndTurn, nil
	case agent.ReasonMaxTurns:
		return sdk.StopReasonMaxTurnRequests, nil
	case agent.ReasonMaxTokens:
		return sdk.StopReasonMaxTokens, nil
	case agent.ReasonRefusal:
		return sdk.StopReasonRefusal, nil
	case agent.ReasonCancelled:
		return sdk.StopReasonCancelled, nil
	}
	msg := "the run ended: " + string(d.Reason)
	if d.Error != "" {
		msg += ": " + d.Error
	}
	return "", sdk.NewInternalError(msg)
}

// usage is the run's token use for the answer.
func usage(d *agent.DoneEvent) *sdk.Usage {
	if d == nil {
		return nil
	}
	u := d.Usage
	in, out := int(u.InputTokens+u.CacheReadTokens+u.CacheWriteTokens), int(u.OutputTokens)
	return &sdk.Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out,
		CachedReadTokens: sdk.Ptr(int(u.CacheReadTokens)), CachedWriteTokens: sdk.Ptr(int(u.CacheWriteTokens))}
}

// message is the user message of a prompt's content blocks: text as it
// is, an embedded resource's text fenced with its uri, a resource link as
// a reference the model may read through its tools (and their permission
// checks: rein reads nothing a link names on its own), images checked as
// the CLI's are (attachment). Audio is refused: it was not offered.
func message(blocks []sdk.ContentBlock) (*llm.Message, error) {
	var text strings.Builder
	var imgs []attachment.Named
	for i, b := range blocks {
		switch {
		case b.Text != nil:
			text.WriteString(b.Text.Text)
		case b.Image != nil:
			img, err := attachment.Decode(fmt.Sprintf("image %d", i+1), b.Image.Data, b.Image.MimeType, attachment.Limits{})
			if err != nil {
				return nil, fmt.Errorf("prompt block %d: %w", i+1, err)
			}
			imgs = append(imgs, attachment.Named{Name: fmt.Sprintf("image %d", i+1), Image: img})
		case b.ResourceLink != nil:
			fmt.Fprintf(&text, "[%s](%s)", b.ResourceLink.Name, b.ResourceLink.Uri)
		case b.Resource != nil:
			r := b.Resource.Resource
			switch {
			case r.TextResourceContents != nil:
				fmt.Fprintf(&text, "\n<resource uri=%q>\n%s\n</resource>\n", r.TextResourceContents.Uri, r.TextResourceContents.Text)
			case r.BlobResourceContents != nil && r.BlobResourceContents.MimeType != nil && strings.HasPrefix(*r.BlobResourceContents.MimeType, "image/"):
				br := r.BlobResourceContents
				img, err := attachment.Decode(br.Uri, br.Blob, *br.MimeType, attachment.Limits{})
				if err != nil {
					return nil, fmt.Errorf("prompt block %d (%s): %w", i+1, br.Uri, err)
				}
				imgs = append(imgs, attachment.Named{Name: br.Uri, Image: img})
			default:
				return nil, fmt.Errorf("prompt block %d: rein takes text resources and images, not this binary resource; link the file instead (resource_link)", i+1)
			}
		case b.Audio != nil:
			return nil, fmt.Errorf("prompt block %d: rein does not take audio (promptCapabilities.audio is false)", i+1)
		default:
			return nil, fmt.Errorf("prompt block %d: unknown content type", i+1)
		}
		if text.Len() > maxPromptText {
			return nil, fmt.Errorf("the prompt's text passes %d MiB; link large files (resource_link) and the model reads what it needs", maxPromptText>>20)
		}
	}
	if text.Len() == 0 && len(imgs) == 0 {
		return nil, fmt.Errorf("the prompt is empty; send at least one text block")
	}
	return attachment.Message(text.String(), imgs, attachment.Limits{})
}
