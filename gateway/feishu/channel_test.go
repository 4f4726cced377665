package feishu

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/gateway"
)

func TestSendEdit(t *testing.T) {
	tests := []struct {
		name        string
		send, edit  gateway.Outgoing
		wantButtons []gateway.Button
	}{
		{name: "plain text",
			send: gateway.Outgoing{ChatID: "5001", Text: "thinking…"},
			edit: gateway.Outgoing{ChatID: "5001", Text: "done: <b>not bold</b> & *not markdown*"}},
		{name: "buttons, then answered",
			send: gateway.Outgoing{ChatID: "5001", Text: "🔐 Allow write_file?", Buttons: []gateway.Button{
				{Label: "Allow once", Data: "perm:abc:once"}, {Label: "Deny", Data: "perm:abc:deny"}}},
			edit:        gateway.Outgoing{ChatID: "5001", Text: "✅ Allowed once"},
			wantButtons: []gateway.Button{{Label: "Allow once", Data: "perm:abc:once"}, {Label: "Deny", Data: "perm:abc:deny"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := setup(t)
			ref, err := e.ch.Send(t.Context(), tt.send)
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			if ref.ChatID != "5001" || ref.ID == "" {
				t.Fatalf("Send returned %+v", ref)
			}
			msgs := e.p.Messages("5001")
			if len(msgs) != 1 || msgs[0].ID != ref.ID || msgs[0].Text != tt.send.Text {
				t.Fatalf("the chat holds %+v; want one message %q", msgs, tt.send.Text)
			}
			if !equalButtons(msgs[0].Buttons, tt.wantButtons) {
				t.Errorf("buttons %+v; want %+v", msgs[0].Buttons, tt.wantButtons)
			}
			// The native form: an interactive, shared card.
			typ, content, _ := e.p.Content(ref.ID)
			var c struct {
				Config struct {
					UpdateMulti bool `json:"update_multi"`
				} `json:"config"`
			}
			if typ != "interactive" || json.Unmarshal([]byte(content), &c) != nil || !c.Config.UpdateMulti {
				t.Errorf("sent as %s %s; want a shared interactive card", typ, content)
			}
			if err := e.ch.Edit(t.Context(), ref, tt.edit); err != nil {
				t.Fatalf("Edit: %v", err)
			}
			msgs = e.p.Messages("5001")
			if len(msgs) != 1 || msgs[0].Text != tt.edit.Text || msgs[0].Edits != 1 || len(msgs[0].Buttons) != 0 {
				t.Errorf("after Edit the chat holds %+v; want the one message edited to %q without buttons", msgs, tt.edit.Text)
			}
		})
	}
}

func equalButtons(a, b []gateway.Button) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestThrottled(t *testing.T) {
	tests := []struct {
		name  string
		after time.Duration
		call  func(e *env, ref gateway.MessageRef) error
	}{
		{"send", 3 * time.Second, func(e *env, _ gateway.MessageRef) error {
			_, err := e.ch.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "hi"})
			return err
		}},
		{"edit", 2 * time.Second, func(e *env, ref gateway.MessageRef) error {
			return e.ch.Edit(t.Context(), ref, gateway.Outgoing{ChatID: "5001", Text: "edited"})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := setup(t)
			ref, err := e.ch.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "first"})
			if err != nil {
				t.Fatal(err)
			}
			e.p.Throttle(1, tt.after)
			err = tt.call(e, ref)
			var re *gateway.RetryError
			if !errors.As(err, &re) || re.After != tt.after {
				t.Fatalf("throttled call: %v; want a *gateway.RetryError after %s", err, tt.after)
			}
			if e.p.Throttled() != 1 {
				t.Errorf("Throttled = %d", e.p.Throttled())
			}
			if err := tt.call(e, ref); err != nil {
				t.Fatalf("the call again: %v", err)
			}
		})
	}
}

func TestTokenRenewed(t *testing.T) {
	e := setup(t)
	if _, err := e.ch.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "one"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ch.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "two"}); err != nil {
		t.Fatal(err)
	}
	if n := e.p.TokensIssued(); n != 1 {
		t.Errorf("%d tenant tokens fetched for two sends; want the cached one", n)
	}
	e.p.ExpireTokens()
	if _, err := e.ch.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "three"}); err != nil {
		t.Fatalf("Send after the token expired: %v", err)
	}
	if n := e.p.TokensIssued(); n != 2 {
		t.Errorf("%d tenant tokens fetched; want a new one after 99991663", n)
	}
	if n := len(e.p.Messages("5001")); n != 3 {
		t.Errorf("%d messages; want 3", n)
	}
}

func TestSendRefused(t *testing.T) {
	tests := []struct {
		name    string
		secret  string
		msg     gateway.Outgoing
		wantErr string
	}{
		{"wrong app secret", "wrong", gateway.Outgoing{ChatID: "5001", Text: "hi"}, "check app_id and the App Secret"},
		{"empty message", "", gateway.Outgoing{ChatID: "5001"}, "neither text nor buttons"},
		{"no chat", "", gateway.Outgoing{Text: "hi"}, "code 99992402"},
		{"too large a card", "", gateway.Outgoing{ChatID: "5001", Text: strings.Repeat("\"", 9000)}, "code 230025"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := setup(t)
			if tt.secret != "" {
				e.ch.appSecret = tt.secret
			}
			_, err := e.ch.Send(t.Context(), tt.msg)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Send: %v; want an error with %q", err, tt.wantErr)
			}
			if _, retry := gateway.RetryAfter(err); retry {
				t.Errorf("a refusal for good is a RetryError: %v", err)
			}
			if strings.Contains(err.Error(), "wrong") {
				t.Errorf("the error shows the secret: %v", err)
			}
		})
	}
}

func TestMaxTextFitsACard(t *testing.T) {
	// The worst text of Limits().MaxText runes still fits a card's 30 KB.
	for _, r := range []string{"\"", "\\", "界", "<", "😀"} {
		text := strings.Repeat(r, (&Channel{}).Limits().MaxText)
		content, err := cardContent(gateway.Outgoing{Text: text, Buttons: []gateway.Button{{Label: "Allow once", Data: strings.Repeat("x", 64)}}})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := marshal(map[string]string{"content": content})
		if len(body) > 30<<10 {
			t.Errorf("%d runes of %q make a %d byte PATCH body; the limit is 30 KB", len([]rune(text)), r, len(body))
		}
	}
}
