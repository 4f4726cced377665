package slack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
	"unicode/utf16"

	slackapi "github.com/slack-go/slack"

	"github.com/reinhq/rein/gateway"
)

// Slack's limits the channel keeps to.
const (
	// maxText is the most runes of one message: Slack shows up to 4,000
	// characters of a message's text (40,000 are kept), and a message with
	// buttons holds its text in section blocks of 3,000 each.
	maxText = 3900
	// maxSection is the most characters (UTF-16 units, as Slack counts)
	// of a section block's text.
	maxSection = 3000
	// maxButtonLabel is the most characters of a button's text.
	maxButtonLabel = 75
	// maxButtons is the most elements of an actions block.
	maxButtons = 25
)

// Name implements gateway.Channel.
func (c *Channel) Name() string { return c.name }

// Limits implements gateway.Channel. chat.update is a Tier 3 method
// (about 50 a minute), hence an edit every 1.2 seconds at most.
func (c *Channel) Limits() gateway.Limits {
	return gateway.Limits{MaxText: maxText, CanEdit: true, EditEvery: 1200 * time.Millisecond, Buttons: true, Files: true}
}

// Send implements gateway.Channel: chat.postMessage, then each file with
// the upload flow (files.getUploadURLExternal, the upload,
// files.completeUploadExternal) into the same conversation.
func (c *Channel) Send(ctx context.Context, m gateway.Outgoing) (gateway.MessageRef, error) {
	opts := messageOptions(m, false)
	var ref gateway.MessageRef
	if m.Text != "" || len(m.Buttons) > 0 || len(m.Files) == 0 {
		ch, ts, err := c.api.PostMessageContext(ctx, m.ChatID, opts...)
		if err != nil {
			return gateway.MessageRef{}, c.classify(ctx, "chat.postMessage", err)
		}
		if ch == "" {
			ch = m.ChatID
		}
		ref = gateway.MessageRef{ChatID: ch, ID: ts}
	}
	for _, f := range m.Files {
		id, err := c.uploadRetrying(ctx, m.ChatID, f, ref.ID != "")
		if err != nil {
			return gateway.MessageRef{}, err
		}
		if ref.ID == "" {
			ref = gateway.MessageRef{ChatID: m.ChatID, ID: id}
		}
	}
	return ref, nil
}

// Edit implements gateway.Channel with chat.update. Blocks are always
// sent (an empty list when there are no buttons), so buttons a question
// carried disappear once it is answered.
func (c *Channel) Edit(ctx context.Context, ref gateway.MessageRef, m gateway.Outgoing) error {
	if _, _, _, err := c.api.UpdateMessageContext(ctx, ref.ChatID, ref.ID, messageOptions(m, true)...); err != nil {
		return c.classify(ctx, "chat.update", err)
	}
	return nil
}

// uploadRetrying uploads f; when the message went out already (posted)
// it waits out a few 429s and outages itself, since the gateway retrying
// the whole Send would post the text twice.
func (c *Channel) uploadRetrying(ctx context.Context, chatID string, f gateway.Attachment, posted bool) (string, error) {
	for attempt := 0; ; attempt++ {
		id, err := c.upload(ctx, chatID, f)
		after, retry := gateway.RetryAfter(err)
		if err == nil || !retry || !posted || attempt == 3 {
			return id, err
		}
		if after <= 0 {
			after = time.Second << attempt
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(after):
		}
	}
}

// upload shares one file in a conversation and returns its file id.
func (c *Channel) upload(ctx context.Context, chatID string, f gateway.Attachment) (string, error) {
	name := f.Name
	if name == "" {
		name = "file"
	}
	if len(f.Data) == 0 {
		return "", fmt.Errorf("slack %s: file %q is empty; Slack refuses empty uploads", c.name, name)
	}
	sum, err := c.api.UploadFileContext(ctx, slackapi.UploadFileParameters{
		Reader: bytes.NewReader(f.Data), FileSize: len(f.Data), Filename: name, Title: name, Channel: chatID,
	})
	if err != nil {
		return "", c.classify(ctx, "file upload", err)
	}
	return sum.ID, nil
}

// messageOptions renders m as chat.postMessage/chat.update parameters:
// the text, escaped (&, <, >) and without mrkdwn, so it shows as written
// and cannot mention or link; with buttons, the text again in plain_text
// section blocks (what Slack shows then) and an actions block whose
// buttons carry the Data as value. edit asks for the blocks to be sent
// even when empty, to clear old buttons.
func messageOptions(m gateway.Outgoing, edit bool) []slackapi.MsgOption {
	opts := []slackapi.MsgOption{
		slackapi.MsgOptionText(m.Text, true),
		slackapi.MsgOptionDisableMarkdown(),
		slackapi.MsgOptionDisableLinkUnfurl(),
		slackapi.MsgOptionDisableMediaUnfurl(),
	}
	if blocks := renderBlocks(m); len(blocks) > 0 || edit {
		opts = append(opts, slackapi.MsgOptionBlocks(blocks...))
	}
	return opts
}

// renderBlocks returns m's Block Kit blocks: none without buttons, else
// the text in sections and the buttons in one actions block.
func renderBlocks(m gateway.Outgoing) []slackapi.Block {
	if len(m.Buttons) == 0 {
		return nil
	}
	var blocks []slackapi.Block
	for _, part := range chunkUTF16(m.Text, maxSection) {
		blocks = append(blocks, slackapi.NewSectionBlock(slackapi.NewTextBlockObject(slackapi.PlainTextType, part, false, false), nil, nil))
	}
	var buttons []slackapi.BlockElement
	for i, b := range m.Buttons {
		if i == maxButtons {
			break
		}
		label := b.Label
		if label == "" {
			label = b.Data
		}
		buttons = append(buttons, slackapi.NewButtonBlockElement(ActionID(i), b.Data,
			slackapi.NewTextBlockObject(slackapi.PlainTextType, truncateUTF16(label, maxButtonLabel), false, false)))
	}
	return append(blocks, slackapi.NewActionBlock("rein_actions", buttons...))
}

// ActionID is the action_id of the i-th button under a message (unique
// within it, as Slack requires); the button's value is its Data.
func ActionID(i int) string { return "rein_button_" + strconv.Itoa(i) }

// chunkUTF16 cuts s into pieces of at most n UTF-16 units, never inside a
// rune; "" is one empty piece.
func chunkUTF16(s string, n int) []string {
	var parts []string
	start, units := 0, 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if w < 0 {
			w = 1
		}
		if units+w > n {
			parts = append(parts, s[start:i])
			start, units = i, 0
		}
		units += w
	}
	if start < len(s) || len(parts) == 0 {
		parts = append(parts, s[start:])
	}
	return parts
}

// truncateUTF16 keeps at most n UTF-16 units of s, ending in "…" when cut.
func truncateUTF16(s string, n int) string {
	parts := chunkUTF16(s, n-1)
	if len(parts) <= 1 {
		return s
	}
	return parts[0] + "…"
}

// classify maps a Web API failure to what the gateway does with it: a
// *gateway.RetryError for HTTP 429 (with Retry-After), 5xx, Slack's
// transient errors and the network; ctx's error when it ended; else a
// permanent error naming the method.
func (c *Channel) classify(ctx context.Context, method string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	wrapped := fmt.Errorf("slack %s: %s: %w", c.name, method, err)
	var rl *slackapi.RateLimitedError
	if errors.As(err, &rl) {
		return &gateway.RetryError{After: rl.RetryAfter, Err: wrapped}
	}
	var sc slackapi.StatusCodeError
	if errors.As(err, &sc) {
		if sc.Code >= 500 || sc.Code == http.StatusTooManyRequests {
			return &gateway.RetryError{Err: wrapped}
		}
		return wrapped
	}
	var se slackapi.SlackErrorResponse
	if errors.As(err, &se) {
		switch se.Err {
		case "ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout":
			return &gateway.RetryError{Err: wrapped}
		case "invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired":
			return fmt.Errorf("slack %s: %s: %s: check the bot token (OAuth & Permissions → Bot User OAuth Token)", c.name, method, se.Err)
		case "not_in_channel", "channel_not_found":
			return fmt.Errorf("slack %s: %s: %s: invite the app to the conversation (/invite @app)", c.name, method, se.Err)
		}
		return wrapped
	}
	var ue *url.Error
	var ne net.Error
	if errors.As(err, &ue) || errors.As(err, &ne) {
		return &gateway.RetryError{Err: wrapped}
	}
	return wrapped
}
