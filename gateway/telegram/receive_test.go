package telegram

import (
	"bytes"
	"strings"
	"testing"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/telegram/telegramfake"
)

func TestReceiveMessage(t *testing.T) {
	tests := []struct {
		name, chat, user, text string
	}{
		{"private chat", "1001", "1001", "hello"},
		{"group chat", "5001", "1001", "list the files"},
		{"stranger", "5002", "6666", "let me in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := telegramfake.New(t)
			h := &recorder{}
			receive(t, newChannel(t, p), h)
			p.Send(t, tt.chat, tt.user, tt.text)
			waitFor(t, "the message", func() bool { m, _, _ := h.snapshot(); return len(m) == 1 })
			m, _, _ := h.snapshot()
			got := m[0]
			if got.ChatID != tt.chat || got.UserID != tt.user || got.Text != tt.text || got.ID == "" {
				t.Errorf("inbound = %+v", got)
			}
			if !strings.Contains(got.UserName, "@user"+tt.user) {
				t.Errorf("UserName = %q", got.UserName)
			}
			waitFor(t, "the confirmation", func() bool { return p.Pending() == 0 })
		})
	}
}

func TestAcknowledgeOnlyAfterHandlerSucceeds(t *testing.T) {
	p := telegramfake.New(t)
	h := &recorder{failMessages: 2, pending: p.Pending}
	receive(t, newChannel(t, p), h)
	p.Send(t, "5001", "1001", "remember me")
	waitFor(t, "the stored message", func() bool { m, _, _ := h.snapshot(); return len(m) == 1 })
	_, _, calls := h.snapshot()
	if calls != 3 {
		t.Errorf("HandleMessage called %d times, want 3 (two failures, then stored)", calls)
	}
	h.mu.Lock()
	seen := h.pendingSeen
	h.mu.Unlock()
	for i, n := range seen {
		if n != 1 {
			t.Errorf("call %d: %d updates unconfirmed at Telegram, want 1", i, n)
		}
	}
	waitFor(t, "the confirmation", func() bool { return p.Pending() == 0 })
	m, _, _ := h.snapshot()
	if m[0].Text != "remember me" {
		t.Errorf("message = %+v", m[0])
	}
}

func TestOrderKeptAcrossFailure(t *testing.T) {
	p := telegramfake.New(t)
	h := &recorder{failMessages: 1}
	p.Send(t, "5001", "1001", "one")
	p.Send(t, "5001", "1001", "two")
	receive(t, newChannel(t, p), h)
	waitFor(t, "both messages", func() bool { m, _, _ := h.snapshot(); return len(m) == 2 })
	m, _, _ := h.snapshot()
	if m[0].Text != "one" || m[1].Text != "two" {
		t.Errorf("messages = %q, %q", m[0].Text, m[1].Text)
	}
}

func TestRestartRedeliversUnconfirmed(t *testing.T) {
	p := telegramfake.New(t)
	h1 := &recorder{}
	stop := receive(t, newChannel(t, p), h1)
	p.Send(t, "5001", "1001", "before restart")
	waitFor(t, "the message", func() bool { m, _, _ := h1.snapshot(); return len(m) == 1 })
	if err := stop(); err != nil {
		t.Fatalf("Receive: %v", err)
	}
	if n := p.Pending(); n != 0 {
		t.Errorf("%d updates unconfirmed after a clean stop", n)
	}
	p.Redeliver(t)
	h2 := &recorder{}
	receive(t, newChannel(t, p), h2)
	waitFor(t, "the redelivered message", func() bool { m, _, _ := h2.snapshot(); return len(m) == 1 })
	m1, _, _ := h1.snapshot()
	m2, _, _ := h2.snapshot()
	if m1[0].ID != m2[0].ID {
		t.Errorf("redelivered ID %q, first %q: the gateway could not tell it is the same", m2[0].ID, m1[0].ID)
	}
}

func TestPress(t *testing.T) {
	p := telegramfake.New(t)
	c := newChannel(t, p)
	h := &recorder{}
	receive(t, c, h)
	ref, err := c.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "Run rm?", Buttons: []gateway.Button{
		{Label: "Approve", Data: "approve:p7"}, {Label: "Deny", Data: "deny:p7"},
	}})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	p.Press(t, ref, "1001", "deny:p7")
	waitFor(t, "the action", func() bool { _, a, _ := h.snapshot(); return len(a) == 1 })
	_, a, _ := h.snapshot()
	got := a[0]
	if got.Data != "deny:p7" || got.UserID != "1001" || got.ChatID != "5001" || got.Message != ref || got.ID == "" {
		t.Errorf("action = %+v, message %+v", got, ref)
	}
	waitFor(t, "the answer", func() bool { return len(p.Answered()) == 1 })
	if p.Answered()[0] != got.ID {
		t.Errorf("answered %v, want %s", p.Answered(), got.ID)
	}
}

func TestInboundAttachments(t *testing.T) {
	big := bytes.Repeat([]byte("x"), gateway.MaxAttachment+1)
	jpeg := append([]byte("\xff\xd8\xff\xe0"), bytes.Repeat([]byte{7}, 100)...)
	tests := []struct {
		name     string
		send     func(p *telegramfake.Platform)
		wantText string
		want     []gateway.Attachment
	}{
		{
			name:     "photo: the largest size",
			send:     func(p *telegramfake.Platform) { p.SendPhoto(t, "5001", "1001", "what is this?", jpeg) },
			wantText: "what is this?",
			want:     []gateway.Attachment{{Name: "photo.jpg", MIME: "image/jpeg", Data: jpeg}},
		},
		{
			name: "document",
			send: func(p *telegramfake.Platform) {
				p.SendDocument(t, "5001", "1001", "log.txt", "text/plain", "", []byte("boom"))
			},
			wantText: "",
			want:     []gateway.Attachment{{Name: "log.txt", MIME: "text/plain", Data: []byte("boom")}},
		},
		{
			name:     "too large: left out and named",
			send:     func(p *telegramfake.Platform) { p.SendDocument(t, "5001", "1001", "dump.bin", "", "see", big) },
			wantText: "see\n\n[dump.bin (10 MB) was left out: files over 10 MB are not fetched]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := telegramfake.New(t)
			h := &recorder{}
			receive(t, newChannel(t, p), h)
			tt.send(p)
			waitFor(t, "the message", func() bool { m, _, _ := h.snapshot(); return len(m) == 1 })
			m, _, _ := h.snapshot()
			got := m[0]
			if got.Text != tt.wantText {
				t.Errorf("Text = %q, want %q", got.Text, tt.wantText)
			}
			if len(got.Attachments) != len(tt.want) {
				t.Fatalf("attachments = %d, want %d", len(got.Attachments), len(tt.want))
			}
			for i, w := range tt.want {
				g := got.Attachments[i]
				if g.Name != w.Name || g.MIME != w.MIME || !bytes.Equal(g.Data, w.Data) {
					t.Errorf("attachment %d = %s %s %d bytes, want %s %s %d bytes", i, g.Name, g.MIME, len(g.Data), w.Name, w.MIME, len(w.Data))
				}
			}
		})
	}
}
