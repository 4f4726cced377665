package discord

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/discord/discordfake"
)

func TestReceiveMessage(t *testing.T) {
	p := discordfake.New(t)
	c := newChannel(t, p)
	h := &recorder{}
	receive(t, c, h)
	p.Send(t, "5001", "1001", "hello bot")
	eventually(t, "the message", func() bool { return len(h.messages()) == 1 })
	m := h.messages()[0]
	if m.ChatID != "5001" || m.UserID != "1001" || m.ID == "" || m.Text != "hello bot" || m.UserName == "" {
		t.Fatalf("inbound = %+v", m)
	}
	// The bot's own messages come back over the gateway; they are not
	// handed on.
	if _, err := c.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "my answer"}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	p.Send(t, "5001", "1001", "second")
	eventually(t, "the second message", func() bool { return len(h.messages()) == 2 })
	if got := h.messages()[1].Text; got != "second" {
		t.Fatalf("second inbound = %q (the bot's own message was handed on?)", got)
	}
}

// A message the handler fails is handed to it again until it takes it.
func TestReceiveRetriesUntilStored(t *testing.T) {
	p := discordfake.New(t)
	c := newChannel(t, p)
	h := &recorder{failFirst: 2}
	receive(t, c, h)
	p.Send(t, "5001", "1001", "keep me")
	eventually(t, "the message stored", func() bool { return len(h.messages()) == 1 })
	if n := h.attempts(); n != 3 {
		t.Fatalf("attempts = %d, want 3", n)
	}
	if got := h.messages()[0]; got.Text != "keep me" {
		t.Fatalf("inbound = %+v", got)
	}
}

func TestPress(t *testing.T) {
	p := discordfake.New(t)
	c := newChannel(t, p)
	h := &recorder{}
	receive(t, c, h)
	ref, err := c.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "run rm?", Buttons: []gateway.Button{{Label: "Allow", Data: "allow:42"}, {Label: "Deny", Data: "deny:42"}}})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	id := p.PressID(t, ref, "1001", "deny:42")
	eventually(t, "the press", func() bool { return len(h.actions()) == 1 })
	a := h.actions()[0]
	want := gateway.Action{ChatID: "5001", UserID: "1001", UserName: "User 1001", ID: id, Data: "deny:42", Message: ref}
	if a != want {
		t.Fatalf("action = %+v, want %+v", a, want)
	}
	eventually(t, "the interaction callback", func() bool { return p.Answered(id) == 6 })
}

func TestInboundAttachments(t *testing.T) {
	p := discordfake.New(t)
	c := newChannel(t, p)
	h := &recorder{}
	receive(t, c, h)
	img := []byte("\x89PNG\r\n\x1a\n fake image")
	p.SendFiles(t, "5002", "1001", "what is this?",
		discordfake.Upload{Name: "cat.png", MIME: "image/png", Data: img},
		discordfake.Upload{Name: "notes.pdf", MIME: "application/pdf", Data: []byte("%PDF")},
	)
	eventually(t, "the message", func() bool { return len(h.messages()) == 1 })
	m := h.messages()[0]
	if len(m.Attachments) != 1 {
		t.Fatalf("attachments = %+v", m.Attachments)
	}
	if a := m.Attachments[0]; a.Name != "cat.png" || a.MIME != "image/png" || string(a.Data) != string(img) {
		t.Fatalf("attachment = %+v", a)
	}
	if !strings.HasPrefix(m.Text, "what is this?") || !strings.Contains(m.Text, "notes.pdf") {
		t.Fatalf("text = %q", m.Text)
	}
}

// A new Channel against the same fake (a restart) receives again; an
// update delivered again arrives with the same ID, for the gateway to
// drop.
func TestRestartRedelivery(t *testing.T) {
	p := discordfake.New(t)
	h := &recorder{}
	stop := receive(t, newChannel(t, p), h)
	p.Send(t, "5001", "1001", "once")
	eventually(t, "the message", func() bool { return len(h.messages()) == 1 })
	if err := stop(); err != nil {
		t.Fatalf("Receive: %v", err)
	}
	receive(t, newChannel(t, p), h)
	p.Redeliver(t)
	eventually(t, "the redelivery", func() bool { return len(h.messages()) == 2 })
	if a, b := h.messages()[0], h.messages()[1]; a.ID != b.ID || b.Text != "once" {
		t.Fatalf("redelivered %+v, first %+v", b, a)
	}
}

// Messages posted while the bot was away (Discord drops their
// dispatches) are fetched after the next connect, in the chats it knows.
func TestCatchUpAfterOutage(t *testing.T) {
	p := discordfake.New(t)
	p.DropOffline()
	c := newChannel(t, p)
	h := &recorder{}
	stop := receive(t, c, h)
	eventually(t, "the bot to connect", func() bool { return p.Connected() })
	p.Send(t, "5001", "1001", "before")
	eventually(t, "the first message", func() bool { return len(h.messages()) == 1 })
	if err := stop(); err != nil {
		t.Fatalf("Receive: %v", err)
	}
	eventually(t, "the bot to be gone", func() bool { return !p.Connected() })
	p.Send(t, "5001", "1001", "while away 1")
	p.Send(t, "5001", "1001", "while away 2")
	receive(t, c, h)
	eventually(t, "the missed messages", func() bool { return len(h.messages()) == 3 })
	got := h.messages()
	if got[1].Text != "while away 1" || got[2].Text != "while away 2" {
		t.Fatalf("caught up %+v", got[1:])
	}
}

// The bot reconnects when Discord closes the gateway connection.
func TestReconnect(t *testing.T) {
	p := discordfake.New(t)
	c := newChannel(t, p)
	h := &recorder{}
	receive(t, c, h)
	eventually(t, "the bot to connect", func() bool { return p.Connected() })
	p.Disconnect()
	eventually(t, "the bot to connect again", func() bool { return p.Identifies() == 2 && p.Connected() })
	p.Send(t, "5001", "1001", "still there?")
	eventually(t, "the message", func() bool { return len(h.messages()) == 1 })
}

func TestReceiveBadToken(t *testing.T) {
	p := discordfake.New(t)
	c, err := New("discord", Config{APIURL: p.URL()}, func(string) string { return "wrong-token" })
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	err = c.Receive(t.Context(), &recorder{})
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "wrong-token") {
		t.Fatalf("Receive = %v", err)
	}
}
