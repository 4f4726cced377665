package slack_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/slack/slackfake"
)

func TestInbound(t *testing.T) {
	tests := []struct {
		name, chat, text, want string
	}{
		{"channel message", "5001", "please list the files", "please list the files"},
		{"direct message", "D5002", "hi", "hi"},
		{"mention of the bot", "5001", "<@" + slackfake.BotUserID + "> list the files", "list the files"},
		{"mention of someone else", "5001", "<@U777> is away", "<@U777> is away"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.p.Send(t, tt.chat, "1001", tt.text)
			e.h.wait(t, 1)
			msgs := e.h.messages()
			got := msgs[0]
			if got.ChatID != tt.chat || got.UserID != "1001" || got.Text != tt.want || !strings.HasPrefix(got.ID, tt.chat+"/") {
				t.Fatalf("inbound = %+v; want %q from 1001 in %s", got, tt.want, tt.chat)
			}
			// A mention comes as a message and an app_mention event: one
			// message, one ID.
			for _, m := range msgs[1:] {
				if m.ID != got.ID {
					t.Errorf("one message arrived with two IDs: %q, %q", got.ID, m.ID)
				}
			}
		})
	}
}

func TestAcknowledgedAfterStored(t *testing.T) {
	e := newEnv(t)
	e.h.failNext(1)
	e.p.Send(t, "5001", "1001", "first") // answered 500: Slack keeps it
	e.p.Send(t, "5001", "1001", "second")
	e.h.wait(t, 2)
	got := e.h.messages()
	if len(got) != 2 || got[0].Text != "first" || got[1].Text != "second" || e.h.failures != 1 {
		t.Fatalf("stored %+v after %d failures; want first (redelivered), then second", got, e.h.failures)
	}
	// Redelivered after it was acknowledged: the same ID, for the
	// gateway to drop.
	e.p.Redeliver(t)
	e.h.wait(t, 3)
	if m := e.h.messages(); m[2].ID != m[1].ID {
		t.Fatalf("a redelivery has a new ID: %q vs %q", m[2].ID, m[1].ID)
	}
}

func TestAttachmentIn(t *testing.T) {
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 100)...)
	big := make([]byte, gateway.MaxAttachment+1)
	tests := []struct {
		name     string
		file     gateway.Attachment
		want     []gateway.Attachment
		wantText string
	}{
		{"an image", gateway.Attachment{Name: "cat.png", MIME: "image/png", Data: png},
			[]gateway.Attachment{{Name: "cat.png", MIME: "image/png", Data: png}}, "what is this?"},
		{"too large", gateway.Attachment{Name: "huge.bin", MIME: "application/octet-stream", Data: big},
			nil, "what is this?\n[huge.bin was left out: 10485761 bytes, more than the 10485760 kept]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.p.SendFile(t, "5001", "1001", "what is this?", tt.file)
			e.h.wait(t, 1)
			m := e.h.messages()[0]
			if m.Text != tt.wantText || !reflect.DeepEqual(m.Attachments, tt.want) {
				t.Fatalf("inbound = %q with %d attachments; want %q with %d", m.Text, len(m.Attachments), tt.wantText, len(tt.want))
			}
		})
	}
}

// post sends body to path signed with secret at ts; it returns the
// status and body.
func post(t *testing.T, e *env, path, contentType, secret string, ts time.Time, body []byte, sign bool) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	if sign {
		s := strconv.FormatInt(ts.Unix(), 10)
		req.Header.Set("X-Slack-Request-Timestamp", s)
		req.Header.Set("X-Slack-Signature", slackfake.Sign(secret, s, body))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

func callback(event map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{"type": "event_callback", "event_id": "Ev1", "team_id": slackfake.TeamID, "event": event})
	return b
}

func TestVerification(t *testing.T) {
	msg := callback(map[string]any{"type": "message", "channel": "5001", "user": "1001", "text": "hi", "ts": "1.1"})
	tests := []struct {
		name   string
		secret string
		ts     time.Time
		sign   bool
		body   []byte
		code   int
	}{
		{"signed", slackfake.SigningSecret, time.Now(), true, msg, 200},
		{"unsigned", "", time.Now(), false, msg, 401},
		{"wrong secret", "another-secret", time.Now(), true, msg, 401},
		{"six minutes old", slackfake.SigningSecret, time.Now().Add(-6 * time.Minute), true, msg, 401},
		{"from the future", slackfake.SigningSecret, time.Now().Add(6 * time.Minute), true, msg, 401},
		{"too large", slackfake.SigningSecret, time.Now(), true, bytes.Repeat([]byte(" "), 1<<20+1), 413},
		{"not JSON", slackfake.SigningSecret, time.Now(), true, []byte("{"), 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			code, _ := post(t, e, "/events", "application/json", tt.secret, tt.ts, tt.body, tt.sign)
			if code != tt.code {
				t.Fatalf("status %d; want %d", code, tt.code)
			}
			if n := len(e.h.messages()); (code == 200) != (n == 1) {
				t.Fatalf("%d messages reached the handler after a %d", n, code)
			}
		})
	}
	t.Run("tampered body", func(t *testing.T) {
		e := newEnv(t)
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+"/events", bytes.NewReader(append(msg, ' ')))
		req.Header.Set("X-Slack-Request-Timestamp", ts)
		req.Header.Set("X-Slack-Signature", slackfake.Sign(slackfake.SigningSecret, ts, msg))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Fatalf("status %d; want 401", resp.StatusCode)
		}
	})
}

func TestURLVerification(t *testing.T) {
	e := newEnv(t)
	body := []byte(`{"token":"x","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`)
	code, resp := post(t, e, "/events", "application/json", slackfake.SigningSecret, time.Now(), body, true)
	var got struct{ Challenge string }
	if code != 200 || json.Unmarshal([]byte(resp), &got) != nil || got.Challenge != "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" {
		t.Fatalf("%d %s; want the challenge back", code, resp)
	}
}

func TestIgnored(t *testing.T) {
	tests := []struct {
		name  string
		event map[string]any
	}{
		{"a bot's message", map[string]any{"type": "message", "channel": "5001", "user": slackfake.BotUserID, "bot_id": slackfake.BotID, "text": "echo", "ts": "1.1"}},
		{"bot_message", map[string]any{"type": "message", "subtype": "bot_message", "channel": "5001", "bot_id": "B1", "text": "x", "ts": "1.2"}},
		{"an edit", map[string]any{"type": "message", "subtype": "message_changed", "channel": "5001", "ts": "1.3",
			"message": map[string]any{"type": "message", "user": "1001", "text": "edited", "ts": "1.0"}}},
		{"a deletion", map[string]any{"type": "message", "subtype": "message_deleted", "channel": "5001", "ts": "1.4", "deleted_ts": "1.0"}},
		{"a join", map[string]any{"type": "message", "subtype": "channel_join", "channel": "5001", "user": "1001", "ts": "1.5"}},
		{"a bot's mention", map[string]any{"type": "app_mention", "channel": "5001", "user": "U9", "bot_id": "B9", "text": "<@U0000BOT>", "ts": "1.6"}},
		{"another event", map[string]any{"type": "reaction_added", "user": "1001", "reaction": "thumbsup", "event_ts": "1.7"}},
		{"an unknown event", map[string]any{"type": "no_such_event_type"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			code, _ := post(t, e, "/events", "application/json", slackfake.SigningSecret, time.Now(), callback(tt.event), true)
			if code != 200 || len(e.h.messages()) != 0 {
				t.Fatalf("status %d, %d messages; want 200 and none", code, len(e.h.messages()))
			}
		})
	}
}

func TestInteractivity(t *testing.T) {
	form := func(payload string) []byte { return []byte(url.Values{"payload": {payload}}.Encode()) }
	press := `{"type":"block_actions","trigger_id":"t1","user":{"id":"1001","name":"ann"},"container":{"type":"message","message_ts":"9.9","channel_id":"5001"},` +
		`"actions":[{"action_id":"rein_button_0","block_id":"b","type":"button","value":"p1:once","action_ts":"1.1"}]}`
	tests := []struct {
		name string
		body []byte
		code int
		want *gateway.Action
	}{
		{"press", form(press), 200, &gateway.Action{ChatID: "5001", UserID: "1001", UserName: "ann", ID: "press/t1", Data: "p1:once",
			Message: gateway.MessageRef{ChatID: "5001", ID: "9.9"}}},
		{"another app's button", form(strings.Replace(press, "rein_button_0", "other", 1)), 200, nil},
		{"a shortcut", form(`{"type":"shortcut","callback_id":"x","trigger_id":"t"}`), 200, nil},
		{"no payload", []byte("a=b"), 400, nil},
		{"broken payload", form("{"), 400, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			code, _ := post(t, e, "/interactivity", "application/x-www-form-urlencoded", slackfake.SigningSecret, time.Now(), tt.body, true)
			got := e.h.presses()
			if code != tt.code || (tt.want == nil) != (len(got) == 0) || (tt.want != nil && got[0] != *tt.want) {
				t.Fatalf("status %d, actions %+v; want %d, %+v", code, got, tt.code, tt.want)
			}
		})
	}
	t.Run("unsigned", func(t *testing.T) {
		e := newEnv(t)
		if code, _ := post(t, e, "/interactivity", "application/x-www-form-urlencoded", "", time.Now(), form(press), false); code != 401 {
			t.Fatalf("status %d; want 401", code)
		}
	})
	t.Run("acknowledged after stored", func(t *testing.T) {
		e := newEnv(t)
		e.h.failNext(1)
		if code, _ := post(t, e, "/interactivity", "application/x-www-form-urlencoded", slackfake.SigningSecret, time.Now(), form(press), true); code != 500 {
			t.Fatalf("status %d; want 500 while the handler fails", code)
		}
	})
}
