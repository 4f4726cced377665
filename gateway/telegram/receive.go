package telegram

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot"

	"github.com/reinhq/rein/gateway"
)

// maxBackoff is the longest wait after failures.
const maxBackoff = time.Minute

// Receive long-polls getUpdates and hands messages and button presses to
// h, one at a time in Telegram's order. The offset moves past an update
// only after h returned nil for it (an update it cannot read is skipped);
// when h fails, the next getUpdates starts at that update again, after a
// backoff. A press is answered (answerCallbackQuery) once h took it.
// Receive returns nil when ctx ends, after confirming what h stored, and
// an error only when Telegram refuses the bot (a revoked token, a webhook
// in the way).
func (c *Channel) Receive(ctx context.Context, h gateway.Handler) error {
	var (
		offset    int64 // the next update_id wanted; 0 before the first
		confirmed int64 // the offset Telegram was last sent
		failures  int
	)
	defer func() {
		if offset != confirmed {
			c.confirm(ctx, offset)
		}
	}()
	for ctx.Err() == nil {
		ups, err := c.fetch(ctx, offset, c.pollTimeout, 100)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var refused *errRefused
			if errors.As(err, &refused) {
				return err
			}
			wait, _ := gateway.RetryAfter(err)
			if wait <= 0 {
				wait = c.backoffFor(failures)
			}
			failures++
			gateway.Sleep(ctx, wait)
			continue
		}
		confirmed = offset
		failed := false
		for _, u := range ups {
			if err := c.dispatch(ctx, h, u); err != nil {
				failed = true
				break
			}
			// Not max(offset, …): after a week without updates Telegram
			// starts update_id afresh at a random value.
			offset = u.ID + 1
		}
		if failed {
			if ctx.Err() != nil {
				return nil
			}
			wait := c.backoffFor(failures)
			failures++
			gateway.Sleep(ctx, wait)
			continue
		}
		failures = 0
	}
	return nil
}

// confirm tells Telegram the updates below offset are stored, so a
// restarted channel does not fetch them again (it would be harmless: the
// gateway handles an update once).
func (c *Channel) confirm(ctx context.Context, offset int64) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, _ = c.fetch(cctx, offset, 0, 1)
}

func (c *Channel) backoffFor(failures int) time.Duration {
	d := c.backoff
	for i := 0; i < failures && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// dispatch hands one update to h; nil means it may be confirmed.
func (c *Channel) dispatch(ctx context.Context, h gateway.Handler, u update) error {
	switch {
	case u.Message != nil:
		in, ok, err := c.inbound(ctx, u.Message)
		if err != nil || !ok {
			return err
		}
		return h.HandleMessage(ctx, in)
	case u.CallbackQuery != nil:
		q := u.CallbackQuery
		if q.Message == nil {
			// A press under an inline-mode message: not one the gateway
			// sent to a chat.
			return nil
		}
		chatID := strconv.FormatInt(q.Message.Chat.ID, 10)
		err := h.HandleAction(ctx, gateway.Action{
			ChatID:   chatID,
			UserID:   strconv.FormatInt(q.From.ID, 10),
			UserName: displayName(q.From),
			ID:       q.ID,
			Data:     q.Data,
			Message:  gateway.MessageRef{ChatID: chatID, ID: strconv.Itoa(q.Message.ID)},
		})
		if err != nil {
			return err
		}
		// The answer only stops the button's spinner; a redelivered
		// press is answered "query is too old", which is fine.
		_, _ = c.bot.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: q.ID})
		return nil
	}
	return nil
}

// inbound reads a message: its text or caption and its photo or document.
// ok is false for a message with none of them (a sticker, a service
// message), which is skipped.
func (c *Channel) inbound(ctx context.Context, m *message) (gateway.Inbound, bool, error) {
	if m.From == nil || m.From.IsBot {
		return gateway.Inbound{}, false, nil
	}
	chatID := strconv.FormatInt(m.Chat.ID, 10)
	in := gateway.Inbound{
		ChatID:   chatID,
		UserID:   strconv.FormatInt(m.From.ID, 10),
		UserName: displayName(*m.From),
		// message_id is unique in its chat and, unlike update_id, never
		// restarts.
		ID:   chatID + ":" + strconv.Itoa(m.ID),
		Text: m.Text,
	}
	if in.Text == "" {
		in.Text = m.Caption
	}
	var notes []string
	if f, ok := largestPhoto(m.Photo); ok {
		att, note, err := c.attachment(ctx, f.FileID, f.FileSize, "photo.jpg", "image/jpeg")
		if err != nil {
			return gateway.Inbound{}, false, err
		}
		in.Attachments, notes = appendAttachment(in.Attachments, notes, att, note)
	}
	if d := m.Document; d != nil && d.FileID != "" {
		att, note, err := c.attachment(ctx, d.FileID, d.FileSize, d.FileName, d.MimeType)
		if err != nil {
			return gateway.Inbound{}, false, err
		}
		in.Attachments, notes = appendAttachment(in.Attachments, notes, att, note)
	}
	if len(notes) > 0 {
		in.Text = strings.TrimSpace(in.Text + "\n\n" + strings.Join(notes, "\n"))
	}
	if in.Text == "" && len(in.Attachments) == 0 {
		return gateway.Inbound{}, false, nil
	}
	return in, true, nil
}

func appendAttachment(atts []gateway.Attachment, notes []string, att *gateway.Attachment, note string) ([]gateway.Attachment, []string) {
	if att != nil {
		atts = append(atts, *att)
	}
	if note != "" {
		notes = append(notes, note)
	}
	return atts, notes
}

// largestPhoto is the biggest size of a photo the gateway fetches.
func largestPhoto(sizes []photoSize) (photoSize, bool) {
	var best photoSize
	found := false
	for _, s := range sizes {
		if s.FileID == "" || s.FileSize > gateway.MaxAttachment {
			continue
		}
		if !found || s.Width*s.Height > best.Width*best.Height || (s.Width*s.Height == best.Width*best.Height && s.FileSize > best.FileSize) {
			best, found = s, true
		}
	}
	if !found && len(sizes) > 0 {
		// Every size is too large: name the largest so the note says so.
		return sizes[len(sizes)-1], true
	}
	return best, found
}

func displayName(u user) string {
	name := strings.TrimSpace(u.FirstName + " " + u.LastName)
	switch {
	case u.Username != "" && name != "":
		return name + " (@" + u.Username + ")"
	case u.Username != "":
		return "@" + u.Username
	}
	return name
}
