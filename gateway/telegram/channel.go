package telegram

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/reinhq/rein/gateway"
)

var (
	_ gateway.Channel = (*Channel)(nil)
	_ gateway.Poller  = (*Channel)(nil)
)

// Telegram's limits.
const (
	// maxText is the most characters of a message's text.
	maxText = 4096
	// maxCallbackData is the most bytes of a button's callback_data.
	maxCallbackData = 64
	// maxPhoto is the largest upload sendPhoto takes.
	maxPhoto = 10 << 20
)

// Name is the channel's name in the configuration.
func (c *Channel) Name() string { return c.name }

// Limits are Telegram's: 4096 characters a message, edits, inline
// keyboards and files. Telegram allows a bot about one message a second
// in a chat, so edits of one message come at most every 1.1s.
func (c *Channel) Limits() gateway.Limits {
	return gateway.Limits{
		MaxText:   maxText,
		CanEdit:   true,
		EditEvery: 1100 * time.Millisecond,
		Buttons:   true,
		Files:     true,
	}
}

// Send posts m as plain text with its buttons as an inline keyboard, then
// its files (images as photos, the rest as documents). The reference is
// the text message's, or the first file's when there is no text.
func (c *Channel) Send(ctx context.Context, m gateway.Outgoing) (gateway.MessageRef, error) {
	if err := checkChat(m.ChatID); err != nil {
		return gateway.MessageRef{}, err
	}
	kb, err := keyboard(m.Buttons)
	if err != nil {
		return gateway.MessageRef{}, err
	}
	var ref gateway.MessageRef
	if strings.TrimSpace(m.Text) != "" || len(m.Files) == 0 {
		params := &bot.SendMessageParams{ChatID: m.ChatID, Text: fitText(m.Text)}
		if kb != nil {
			params.ReplyMarkup = kb
		}
		msg, err := c.bot.SendMessage(ctx, params)
		if err != nil {
			return gateway.MessageRef{}, c.classify(ctx, "sendMessage", err)
		}
		ref = gateway.MessageRef{ChatID: m.ChatID, ID: strconv.Itoa(msg.ID)}
		kb = nil
	}
	for _, f := range m.Files {
		id, err := c.sendFile(ctx, m.ChatID, f, kb)
		if err != nil {
			return gateway.MessageRef{}, err
		}
		if ref.ID == "" {
			ref = gateway.MessageRef{ChatID: m.ChatID, ID: strconv.Itoa(id)}
		}
		kb = nil
	}
	return ref, nil
}

// sendFile uploads one file: a JPEG, PNG or WebP image as a photo (shown
// inline), anything else, or an image Telegram refuses as a photo, as a
// document.
func (c *Channel) sendFile(ctx context.Context, chatID string, f gateway.Attachment, kb *inlineKeyboard) (int, error) {
	name := f.Name
	if name == "" {
		name = "file"
	}
	upload := &models.InputFileUpload{Filename: name, Data: bytes.NewReader(f.Data)}
	var markup models.ReplyMarkup
	if kb != nil {
		markup = kb
	}
	var (
		msg *models.Message
		err error
		op  string
	)
	if isPhoto(f) {
		op = "sendPhoto"
		msg, err = c.bot.SendPhoto(ctx, &bot.SendPhotoParams{ChatID: chatID, Photo: upload, ReplyMarkup: markup})
		if errors.Is(err, bot.ErrorBadRequest) {
			// Telegram refuses photos it cannot process (odd
			// dimensions, a broken image): send the file as it is.
			upload = &models.InputFileUpload{Filename: name, Data: bytes.NewReader(f.Data)}
			msg, err = nil, nil
		}
	}
	if msg == nil && err == nil {
		op = "sendDocument"
		msg, err = c.bot.SendDocument(ctx, &bot.SendDocumentParams{ChatID: chatID, Document: upload, ReplyMarkup: markup})
	}
	if err != nil {
		return 0, c.classify(ctx, op, err)
	}
	return msg.ID, nil
}

func isPhoto(f gateway.Attachment) bool {
	switch strings.ToLower(f.MIME) {
	case "image/jpeg", "image/png", "image/webp":
		return len(f.Data) > 0 && len(f.Data) <= maxPhoto
	}
	return false
}

// Edit replaces the text and the inline keyboard of a message Send
// posted; without buttons the keyboard is removed. Files are not
// edited. An edit that changes nothing is not an error.
func (c *Channel) Edit(ctx context.Context, ref gateway.MessageRef, m gateway.Outgoing) error {
	if err := checkChat(ref.ChatID); err != nil {
		return err
	}
	id, err := strconv.Atoi(ref.ID)
	if err != nil || id <= 0 {
		return fmt.Errorf("telegram: message id %q is not a Telegram message id", ref.ID)
	}
	kb, err := keyboard(m.Buttons)
	if err != nil {
		return err
	}
	params := &bot.EditMessageTextParams{ChatID: ref.ChatID, MessageID: id, Text: fitText(m.Text)}
	if kb != nil {
		// A nil *inlineKeyboard in the interface would be sent as
		// "null"; leaving the field out removes the keyboard.
		params.ReplyMarkup = kb
	}
	_, err = c.bot.EditMessageText(ctx, params)
	if err != nil && errors.Is(err, bot.ErrorBadRequest) && strings.Contains(err.Error(), "message is not modified") {
		return nil
	}
	return c.classify(ctx, "editMessageText", err)
}

// inlineKeyboard is an InlineKeyboardMarkup of callback buttons, written
// here because the library's button type always sends an empty
// copy_text, which is not a valid button.
type inlineKeyboard struct {
	InlineKeyboard [][]callbackButton `json:"inline_keyboard"`
}

type callbackButton struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data"`
}

// keyboard is buttons as one row of an inline keyboard, nil without
// buttons.
func keyboard(buttons []gateway.Button) (*inlineKeyboard, error) {
	if len(buttons) == 0 {
		return nil, nil
	}
	row := make([]callbackButton, 0, len(buttons))
	for _, b := range buttons {
		if n := len(b.Data); n == 0 || n > maxCallbackData {
			return nil, fmt.Errorf("telegram: button %q: its data is %d bytes, Telegram takes 1 to %d", b.Label, n, maxCallbackData)
		}
		label := b.Label
		if strings.TrimSpace(label) == "" {
			label = b.Data
		}
		row = append(row, callbackButton{Text: label, CallbackData: b.Data})
	}
	return &inlineKeyboard{InlineKeyboard: [][]callbackButton{row}}, nil
}

// fitText clips s to Telegram's 4096 characters, which Telegram counts in
// UTF-16 code units: a text of 4096 runes with emoji in it (two units
// each) is too long although Limits.MaxText allows it. Such a text loses
// its end to a "…" rather than the whole message to a refusal.
func fitText(s string) string {
	if utf16Len(s) <= maxText {
		return s
	}
	units := 0
	for i, r := range s {
		n := max(utf16.RuneLen(r), 1)
		if units+n > maxText-1 { // room for the "…"
			return s[:i] + "…"
		}
		units += n
	}
	return s
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += max(utf16.RuneLen(r), 1)
	}
	return n
}

func checkChat(id string) error {
	if _, err := strconv.ParseInt(id, 10, 64); err != nil && !strings.HasPrefix(id, "@") {
		return fmt.Errorf("telegram: chat id %q is neither a number nor an @channel name", id)
	}
	return nil
}

// classify turns the library's error into the gateway's: 429 is a
// [*gateway.RetryError] after the retry_after Telegram gave; a refusal
// (400, 401, 403, 404, 409, a migrated group) is final; anything else (a
// 5xx, a network error, an answer that is not the Bot API's JSON) is a
// RetryError with no After, so the gateway backs off.
func (c *Channel) classify(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	wrapped := fmt.Errorf("telegram: %s: %w", op, err)
	if ctx.Err() != nil {
		return wrapped
	}
	var tooMany *bot.TooManyRequestsError
	if errors.As(err, &tooMany) {
		return &gateway.RetryError{After: time.Duration(tooMany.RetryAfter) * time.Second, Err: wrapped}
	}
	var migrate *bot.MigrateError
	if errors.As(err, &migrate) {
		return fmt.Errorf("telegram: %s: the group became supergroup %d: route it under that chat id: %w", op, migrate.MigrateToChatID, err)
	}
	if errors.Is(err, bot.ErrorUnauthorized) {
		return fmt.Errorf("telegram: %s: the bot token was refused: check %s: %w", op, c.tokenEnv, err)
	}
	for _, final := range []error{bot.ErrorBadRequest, bot.ErrorForbidden, bot.ErrorNotFound, bot.ErrorConflict} {
		if errors.Is(err, final) {
			return wrapped
		}
	}
	return &gateway.RetryError{Err: wrapped}
}
