package discord

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/reinhq/rein/gateway"
)

// Discord's limits on a message.
const (
	maxText        = 2000
	maxLabel       = 80
	maxCustomID    = 100
	buttonsPerRow  = 5
	maxActionRows  = 5
	maxFilesPerMsg = 10
)

// Name returns the channel's name.
func (c *Channel) Name() string { return c.name }

// Limits says what Discord allows a bot: 2000 characters, edits (5 per
// 5 s per channel, so one per 1.2 s), buttons and files.
func (c *Channel) Limits() gateway.Limits {
	return gateway.Limits{
		MaxText:   maxText,
		CanEdit:   true,
		EditEvery: 1200 * time.Millisecond,
		Buttons:   true,
		Files:     true,
	}
}

// noMentions keeps model text from pinging anyone (@everyone, users,
// roles): it is shown, not parsed.
func noMentions() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}
}

// Send posts m to the channel m.ChatID, with its buttons as an action row
// and its files as uploads.
func (c *Channel) Send(ctx context.Context, m gateway.Outgoing) (gateway.MessageRef, error) {
	if m.ChatID == "" {
		return gateway.MessageRef{}, errors.New("discord: send: no chat id")
	}
	if len(m.Files) > maxFilesPerMsg {
		return gateway.MessageRef{}, fmt.Errorf("discord: send: %d files, Discord takes at most %d a message", len(m.Files), maxFilesPerMsg)
	}
	text := truncate(m.Text, maxText)
	if text == "" && len(m.Files) == 0 && len(m.Buttons) == 0 {
		text = "…" // Discord refuses an empty message.
	}
	send := &discordgo.MessageSend{
		Content:         text,
		Components:      components(m.Buttons),
		AllowedMentions: noMentions(),
	}
	for _, f := range m.Files {
		send.Files = append(send.Files, &discordgo.File{Name: f.Name, ContentType: f.MIME, Reader: bytes.NewReader(f.Data)})
	}
	msg, err := c.rest.ChannelMessageSendComplex(m.ChatID, send, discordgo.WithContext(ctx))
	if err != nil {
		return gateway.MessageRef{}, wrap("send", err)
	}
	return gateway.MessageRef{ChatID: msg.ChannelID, ID: msg.ID}, nil
}

// Edit replaces the text and buttons of the message ref (no buttons
// removes them). Files are not changed.
func (c *Channel) Edit(ctx context.Context, ref gateway.MessageRef, m gateway.Outgoing) error {
	text := truncate(m.Text, maxText)
	if text == "" {
		text = "…"
	}
	comps := components(m.Buttons)
	if comps == nil {
		comps = []discordgo.MessageComponent{}
	}
	edit := &discordgo.MessageEdit{
		ID:              ref.ID,
		Channel:         ref.ChatID,
		Content:         &text,
		Components:      &comps,
		AllowedMentions: noMentions(),
	}
	if _, err := c.rest.ChannelMessageEditComplex(edit, discordgo.WithContext(ctx)); err != nil {
		return wrap("edit", err)
	}
	return nil
}

// components renders buttons as action rows of up to five buttons each
// (Discord's limit; at most five rows). A button's custom_id is its Data.
func components(bs []gateway.Button) []discordgo.MessageComponent {
	var rows []discordgo.MessageComponent
	for i := 0; i < len(bs) && len(rows) < maxActionRows; i += buttonsPerRow {
		row := discordgo.ActionsRow{}
		for _, b := range bs[i:min(i+buttonsPerRow, len(bs))] {
			label := truncate(b.Label, maxLabel)
			if label == "" {
				label = "?"
			}
			row.Components = append(row.Components, discordgo.Button{
				Label:    label,
				Style:    discordgo.SecondaryButton,
				CustomID: truncateBytes(b.Data, maxCustomID),
			})
		}
		rows = append(rows, row)
	}
	return rows
}

// truncate cuts s to n runes.
func truncate(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// truncateBytes cuts s to at most n bytes at a rune boundary.
func truncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// wrap names the operation and turns a refusal for now (429, 5xx, a
// network error) into a [*gateway.RetryError].
func wrap(op string, err error) error {
	err = fmt.Errorf("discord: %s: %w", op, err)
	if after, ok := retryable(err); ok {
		return &gateway.RetryError{After: after, Err: err}
	}
	return err
}

// retryable reports whether err is worth retrying and after how long
// (zero: back off).
func retryable(err error) (time.Duration, bool) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return 0, false
	}
	var rl *discordgo.RateLimitError
	if errors.As(err, &rl) && rl.RateLimit != nil && rl.TooManyRequests != nil {
		return rl.RetryAfter, true
	}
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Response != nil {
		switch code := re.Response.StatusCode; {
		case code == http.StatusTooManyRequests:
			return retryAfter(re.Response.Header), true
		case code >= 500:
			return 0, true
		}
		return 0, false
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return 0, true
	}
	// discordgo retries a 502 itself and then gives up with a plain error.
	if strings.Contains(err.Error(), "Exceeded Max retries") {
		return 0, true
	}
	return 0, false
}

// retryAfter reads a Retry-After header in seconds (Discord sends
// decimals in X-RateLimit-Reset-After and whole seconds in Retry-After).
func retryAfter(h http.Header) time.Duration {
	for _, k := range []string{"Retry-After", "X-RateLimit-Reset-After"} {
		if f, err := strconv.ParseFloat(h.Get(k), 64); err == nil && f > 0 && f < 3600 {
			return time.Duration(f * float64(time.Second))
		}
	}
	return 0
}
