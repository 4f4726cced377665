package gateway

import (
	"context"
	"fmt"
	"strings"

	"github.com/reinhq/rein/memory"
)

// helpText lists the chat's slash commands.
const helpText = `Commands:
/new — start a new conversation (this one is kept)
/stop — stop the reply being worked on, and the queued ones
/model [provider/model] — show or set this chat's model
/cost — tokens and cost of this conversation
/memory — what I remember about you
/plan TEXT — plan TEXT without changing anything, then approve the plan
/approve ID [always], /deny ID — answer a permission question`

// command splits "/name@bot arg" into its name and argument; ok is false
// for text that is not a command.
func command(text string) (name, arg string, ok bool) {
	if !strings.HasPrefix(text, "/") || len(text) < 2 {
		return "", "", false
	}
	head, arg, _ := strings.Cut(text, " ")
	head, _, _ = strings.Cut(head[1:], "@") // Telegram: /stop@my_bot in groups
	name = strings.ToLower(head)
	switch name {
	case "start", "help", "new", "stop", "model", "cost", "memory", "approve", "deny", "plan":
		return name, strings.TrimSpace(arg), true
	}
	return "", "", false // "/etc/hosts is broken" is a message
}

// runCommand answers a slash command in the chat.
func (g *Gateway) runCommand(ctx context.Context, r *route, m Inbound, cmd, arg string) {
	say := func(format string, args ...any) { g.reply(r, m.ChatID, fmt.Sprintf(format, args...)) }
	switch cmd {
	case "start", "help":
		say("%s", helpText)
		return
	case "approve", "deny":
		token, mode, _ := strings.Cut(arg, " ")
		verdict := "deny"
		if cmd == "approve" {
			verdict = "once"
			if strings.TrimSpace(mode) == "always" {
				verdict = "always"
			}
		}
		if token == "" {
			say("Usage: /%s ID, with the ID the question gave.", cmd)
			return
		}
		if _, err := g.answer(ctx, r, m.ChatID, userName(m.UserName, m.UserID), token, verdict); err != nil {
			say("⚠️ %v", err)
		} else if !r.limits.CanEdit {
			say("Done: %s.", verdict)
		}
		return
	case "memory":
		say("%s", g.memoryText())
		return
	}
	c, err := g.chatFor(ctx, r, m.ChatID)
	if err != nil {
		say("⚠️ %v", err)
		return
	}
	switch cmd {
	case "new":
		g.newConversation(ctx, c, say)
	case "stop":
		n := 0
		for _, id := range c.pending() {
			if _, err := g.cfg.Service.Cancel(ctx, id); err == nil {
				n++
			}
		}
		if n == 0 {
			say("Nothing is running.")
		}
	case "model":
		g.setModel(ctx, c, arg, say)
	case "cost":
		c.mu.Lock()
		sid := c.sessionID
		c.mu.Unlock()
		s, err := g.cfg.Sessions.Get(ctx, sid)
		if err != nil {
			say("⚠️ %v", err)
			return
		}
		say("This conversation: %s; tokens: %d in, %d read from cache, %d written to cache, %d out; $%.4f.", plural(s.Runs, "reply", "replies"),
			s.Usage.InputTokens, s.Usage.CacheReadTokens, s.Usage.CacheWriteTokens, s.Usage.OutputTokens, s.CostUSD)
	}
}

// newConversation routes the chat to a new session.
func (g *Gateway) newConversation(ctx context.Context, c *chat, say func(string, ...any)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.runs) > 0 {
		say("A reply is still being worked on: /stop it first, or wait for it.")
		return
	}
	sid, err := g.newSession(ctx, c.r, c.chatID)
	if err == nil {
		err = g.cfg.State.setChat(ctx, c.key, chatRow{SessionID: sid, Model: c.model}, g.cfg.Now())
	}
	if err != nil {
		say("⚠️ %v", err)
		return
	}
	c.sessionID = sid
	say("New conversation. The earlier one is kept (session %s).", sid)
}

// setModel shows or sets the chat's model.
func (g *Gateway) setModel(ctx context.Context, c *chat, arg string, say func(string, ...any)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if arg == "" {
		m := c.model
		if m == "" {
			m = c.r.Model
		}
		if m == "" {
			m = "the configuration's default"
		}
		say("Model: %s. /model provider/model changes it for this chat; /model default goes back.", m)
		return
	}
	if strings.ContainsAny(arg, " \t\n") || strings.HasPrefix(arg, "replay:") {
		say("⚠️ %q is not a model: name one like anthropic/claude-sonnet-4-5 or a profile.", arg)
		return
	}
	model := arg
	if arg == "default" {
		model = ""
	}
	if err := g.cfg.State.setChat(ctx, c.key, chatRow{SessionID: c.sessionID, Model: model}, g.cfg.Now()); err != nil {
		say("⚠️ %v", err)
		return
	}
	c.model = model
	if model == "" {
		model = "the channel's default"
	}
	say("Model for this chat: %s (from the next message).", model)
}

// memoryText is what /memory shows: the profile and the user's notes.
func (g *Gateway) memoryText() string {
	if g.cfg.Memory == nil {
		return "Memory is off for this gateway."
	}
	snap := g.cfg.Memory.Snapshot()
	var b strings.Builder
	for _, f := range snap.Files {
		if f.Scope != memory.ScopeUser {
			continue
		}
		title := "Notes"
		if f.Target == memory.TargetProfile {
			title = "About you"
		}
		fmt.Fprintf(&b, "%s (%d/%d characters):\n", title, f.Chars, f.Cap)
		shown := 0
		for _, e := range f.Entries {
			if e.Shown() {
				b.WriteString("• " + e.Text + "\n")
				shown++
			}
		}
		if shown == 0 {
			b.WriteString("(nothing yet)\n")
		}
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		return "Nothing remembered yet."
	}
	return strings.TrimSpace(b.String())
}

// plural is n with the noun in the number n takes: "1 reply", "2 replies".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
