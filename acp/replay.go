package acp

import (
	"context"
	"encoding/base64"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinhq/rein/llm"
)

// replay sends the session's whole conversation as updates (SPEC SESS-3):
// user text and images as user message chunks, the model's text and
// visible thinking as agent chunks, each tool call as a tool_call and its
// result as the tool_call_update that completes it. The client has them
// all before session/load answers.
func (a *acpAgent) replay(ctx context.Context, l *live) error {
	tr := newTranslator(l.conv.Setup().Workspace().Root)
	tr.tools = l.conv.Tools()
	for _, u := range tr.history(l.conv.History()) {
		if err := a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sdk.SessionId(l.id), Update: u}); err != nil {
			return err
		}
	}
	return nil
}

// history is a stored conversation as updates.
func (t *translator) history(msgs []llm.Message) []sdk.SessionUpdate {
	var out []sdk.SessionUpdate
	for _, m := range msgs {
		for _, b := range m.Content {
			switch b := b.(type) {
			case *llm.Text:
				if b.Text == "" {
					continue
				}
				if m.Role == llm.RoleUser {
					out = append(out, sdk.UpdateUserMessageText(b.Text))
				} else {
					out = append(out, sdk.UpdateAgentMessageText(b.Text))
				}
			case *llm.Image:
				if m.Role == llm.RoleUser && len(b.Data) > 0 {
					out = append(out, sdk.UpdateUserMessage(sdk.ImageBlock(base64.StdEncoding.EncodeToString(b.Data), b.MediaType)))
				}
			case *llm.Thinking:
				if !b.Redacted && b.Text != "" {
					out = append(out, sdk.UpdateAgentThoughtText(b.Text))
				}
			case *llm.ToolUse:
				out = append(out, t.toolStart(b.ID, b.Name, b.Input))
			case *llm.ToolResult:
				out = append(out, t.toolEnd(b.ToolUseID, resultText(b), !b.IsError)...)
			}
		}
	}
	return out
}

// resultText is the text of a tool result.
func resultText(r *llm.ToolResult) string {
	return llm.Message{Content: r.Content}.TextOf()
}
