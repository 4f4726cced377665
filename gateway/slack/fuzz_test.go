package slack_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/reinhq/rein/gateway/slack"
	"github.com/reinhq/rein/gateway/slack/slackfake"
)

// FuzzHandler: whatever a signed request carries, the handler answers
// without panicking, with one of the statuses it means.
func FuzzHandler(f *testing.F) {
	f.Add("/events", []byte(`{"type":"url_verification","challenge":"c"}`))
	f.Add("/events", callback(map[string]any{"type": "message", "channel": "5001", "user": "1001", "text": "hi", "ts": "1.1",
		"files": []any{map[string]any{"id": "F1", "size": 3, "url_private": "http://127.0.0.1:1/x"}}}))
	f.Add("/events", []byte(`{"type":"event_callback","event":null}`))
	f.Add("/events", []byte(`{"type":"event_callback","event":{"type":"message","message":7}}`))
	f.Add("/interactivity", []byte(url.Values{"payload": {`{"type":"block_actions","actions":[{"block_id":"b","action_id":"rein_button_0"}]}`}}.Encode()))
	f.Add("/interactivity", []byte("payload=%7B%22type%22%3A%22block_actions%22%2C%22actions%22%3A%5B1%5D%7D"))
	ch, err := slack.New("slack", slack.Config{APIURL: "http://127.0.0.1:1/api/"}, (&slackfake.Platform{}).Getenv)
	if err != nil {
		f.Fatal(err)
	}
	h := ch.HTTPHandler(newSpy())
	f.Fuzz(func(t *testing.T, path string, body []byte) {
		if path != "/events" && path != "/interactivity" {
			path = "/events"
		}
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		req.Header.Set("X-Slack-Request-Timestamp", ts)
		req.Header.Set("X-Slack-Signature", slackfake.Sign(slackfake.SigningSecret, ts, body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		switch w.Code {
		case 200, 400, 413, 500:
		default:
			t.Fatalf("status %d for %q", w.Code, body)
		}
	})
}

// FuzzParseInteraction: any form body parses or fails, never panics, and
// a press it accepts names a user, a chat and a message.
func FuzzParseInteraction(f *testing.F) {
	f.Add([]byte(url.Values{"payload": {`{"type":"block_actions","user":{"id":"1"},"container":{"message_ts":"1.1","channel_id":"C"},"actions":[{"block_id":"b","action_id":"rein_button_0","value":"v"}]}`}}.Encode()))
	f.Add([]byte("payload=%7B%7D"))
	f.Add([]byte("%zz"))
	f.Fuzz(func(t *testing.T, body []byte) {
		a, handle, err := slack.ParseInteraction(body)
		if handle && (err != nil || a.UserID == "" || a.ChatID == "" || a.Message.ID == "" || a.ID == "") {
			t.Fatalf("accepted %+v, %v", a, err)
		}
	})
}
