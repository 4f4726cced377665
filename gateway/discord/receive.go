package discord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/reinhq/rein/gateway"
)

// Receive connects to the Discord Gateway and hands h the messages and
// button presses it dispatches, until ctx ends.
//
// The gateway has no acknowledgement: Discord does not send an event
// again. So an event h fails is kept in memory and handed to h again
// (with backoff) until h takes it or ctx ends. And after each connect the
// channel fetches, in the chats whose messages h stored, the messages
// posted after the newest one stored (GET /channels/{id}/messages?after=),
// so messages sent while the gateway was down are not lost; chats this
// Channel has not seen yet are not fetched, and button presses made while
// it was down are lost (Discord shows the user "interaction failed").
//
// A press is answered to Discord (DEFERRED_UPDATE_MESSAGE) after h took
// it; Discord wants that within 3 s, else the user sees an error (the
// press is stored all the same).
func (c *Channel) Receive(ctx context.Context, h gateway.Handler) error {
	self, err := c.whoami(ctx)
	if err != nil || ctx.Err() != nil {
		return err
	}
	wait := c.backoff
	for {
		r := &receiver{c: c, h: h, ctx: ctx, self: self, down: make(chan struct{}, 1)}
		s := c.session()
		s.AddHandler(r.onReady)
		s.AddHandler(r.onMessage)
		s.AddHandler(r.onInteraction)
		s.AddHandler(r.onDisconnect)
		err := s.Open()
		if err == nil {
			wait = c.backoff
			select {
			case <-ctx.Done():
			case <-r.down:
			}
			_ = s.Close()
		}
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			if fatal := refused(err); fatal != nil {
				return fatal
			}
			slog.Warn("discord: gateway connect failed", "channel", c.name, "err", err)
			if !gateway.Sleep(ctx, wait) {
				return nil
			}
			wait = min(2*wait, time.Minute)
		}
	}
}

// whoami returns the bot's user id (GET /users/@me), retrying while
// Discord is away; a refused token is an error saying what to fix.
func (c *Channel) whoami(ctx context.Context) (string, error) {
	wait := c.backoff
	for {
		u, err := c.rest.User("@me", discordgo.WithContext(ctx))
		if err == nil {
			return u.ID, nil
		}
		if ctx.Err() != nil {
			return "", nil
		}
		if fatal := refused(err); fatal != nil {
			return "", fatal
		}
		after, _ := retryable(err)
		slog.Warn("discord: cannot reach Discord", "channel", c.name, "err", err)
		if !gateway.Sleep(ctx, max(after, wait)) {
			return "", nil
		}
		wait = min(2*wait, time.Minute)
	}
}

// refused returns the error to stop on when Discord refuses the bot for
// good: a bad token, or intents the application may not use.
func refused(err error) error {
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("discord: Discord refuses the bot token (401): reset it in the Bot tab of your application at https://discord.com/developers/applications and update the environment variable: %w", err)
	}
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		switch ce.Code {
		case 4004:
			return fmt.Errorf("discord: the gateway refuses the bot token (close 4004): reset it in the Bot tab of your application and update the environment variable")
		case 4013, 4014:
			return fmt.Errorf("discord: the gateway refuses the intents (close %d): enable the Message Content intent in the Bot tab of your application at https://discord.com/developers/applications", ce.Code)
		}
	}
	return nil
}

// receiver handles the events of one gateway connection. discordgo calls
// it on its reading goroutine (SyncEvents), in order.
type receiver struct {
	c    *Channel
	h    gateway.Handler
	ctx  context.Context
	self string
	down chan struct{}
}

func (r *receiver) onReady(_ *discordgo.Session, ev *discordgo.Ready) {
	if ev != nil && ev.User != nil && ev.User.ID != "" {
		r.self = ev.User.ID
	}
	r.c.catchUp(r.ctx, r.h, r.self)
}

func (r *receiver) onDisconnect(_ *discordgo.Session, _ *discordgo.Disconnect) {
	select {
	case r.down <- struct{}{}:
	default:
	}
}

func (r *receiver) onMessage(_ *discordgo.Session, ev *discordgo.MessageCreate) {
	if ev == nil || !fromUser(ev.Message, r.self) {
		return
	}
	r.c.handleMessage(r.ctx, r.h, ev.Message)
}

// fromUser reports whether m is a user's message for the handler: not a
// bot's (this one's included), a webhook's or a system message.
func fromUser(m *discordgo.Message, self string) bool {
	if m == nil || m.Author == nil || m.Author.ID == "" || m.Author.Bot || m.Author.System || m.Author.ID == self || m.WebhookID != "" {
		return false
	}
	return m.ID != "" && m.ChannelID != "" && (m.Type == discordgo.MessageTypeDefault || m.Type == discordgo.MessageTypeReply)
}

// handleMessage hands m to h until h takes it (or ctx ends), then notes
// it as the chat's newest stored message.
func (c *Channel) handleMessage(ctx context.Context, h gateway.Handler, m *discordgo.Message) {
	in := c.inbound(ctx, m)
	if c.retry(ctx, "message", func() error { return h.HandleMessage(ctx, in) }) {
		c.seen.note(m.ChannelID, m.ID)
	}
}

func (r *receiver) onInteraction(_ *discordgo.Session, ev *discordgo.InteractionCreate) {
	if ev == nil || ev.Interaction == nil || ev.Type != discordgo.InteractionMessageComponent {
		return
	}
	a, ok := action(ev.Interaction)
	if !ok {
		return
	}
	if !r.c.retry(r.ctx, "button press", func() error { return r.h.HandleAction(r.ctx, a) }) {
		return
	}
	resp := &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}
	if err := r.c.rest.InteractionRespond(ev.Interaction, resp, discordgo.WithContext(r.ctx)); err != nil {
		// Late (over 3 s) or answered already (a redelivery): the press
		// is stored either way.
		slog.Warn("discord: answering a button press failed", "channel", r.c.name, "err", err)
	}
}

// action turns a component interaction into the press of a button.
func action(i *discordgo.Interaction) (gateway.Action, bool) {
	data, ok := i.Data.(discordgo.MessageComponentInteractionData)
	if !ok || data.CustomID == "" {
		return gateway.Action{}, false
	}
	user := i.User
	if i.Member != nil && i.Member.User != nil {
		user = i.Member.User
	}
	if user == nil || user.ID == "" || i.ID == "" || i.ChannelID == "" {
		return gateway.Action{}, false
	}
	a := gateway.Action{
		ChatID:   i.ChannelID,
		UserID:   user.ID,
		UserName: displayName(user),
		ID:       i.ID,
		Data:     data.CustomID,
	}
	if i.Message != nil {
		a.Message = gateway.MessageRef{ChatID: i.ChannelID, ID: i.Message.ID}
	}
	return a, true
}

// displayName is how Discord shows u.
func displayName(u *discordgo.User) string {
	if u.GlobalName != "" {
		return u.GlobalName
	}
	return u.Username
}

// retry calls f until it returns nil (true) or ctx ends (false), waiting
// between failures from c.backoff doubling up to a minute.
func (c *Channel) retry(ctx context.Context, what string, f func() error) bool {
	wait := c.backoff
	for {
		err := f()
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		slog.Warn("discord: the gateway did not take a "+what+"; trying again", "channel", c.name, "err", err, "in", wait)
		if !gateway.Sleep(ctx, wait) {
			return false
		}
		wait = min(2*wait, time.Minute)
	}
}
