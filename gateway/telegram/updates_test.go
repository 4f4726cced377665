package telegram

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/gateway"
)

func TestParseUpdates(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		wantIDs   []int64
		refused   string
		retry     bool
		retryWait time.Duration
	}{
		{name: "updates", status: 200, body: `{"ok":true,"result":[{"update_id":5,"message":{"message_id":1,"chat":{"id":7},"from":{"id":7},"text":"hi"}},{"update_id":6,"callback_query":{"id":"q","from":{"id":7},"data":"d"}}]}`, wantIDs: []int64{5, 6}},
		{name: "empty", status: 200, body: `{"ok":true,"result":[]}`},
		{name: "an unreadable update keeps its id", status: 200, body: `{"ok":true,"result":[{"update_id":9,"message":{"message_id":"not a number"}}]}`, wantIDs: []int64{9}},
		{name: "401", status: 401, body: `{"ok":false,"error_code":401,"description":"Unauthorized"}`, refused: "check TELEGRAM_BOT_TOKEN"},
		{name: "404 malformed token", status: 404, body: `{"ok":false,"error_code":404,"description":"Not Found"}`, refused: "check TELEGRAM_BOT_TOKEN"},
		{name: "webhook set", status: 409, body: `{"ok":false,"error_code":409,"description":"Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"}`, refused: "deleteWebhook"},
		{name: "another poller", status: 409, body: `{"ok":false,"error_code":409,"description":"Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"}`, retry: true},
		{name: "429", status: 429, body: `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 7","parameters":{"retry_after":7}}`, retry: true, retryWait: 7 * time.Second},
		{name: "502 html", status: 502, body: `<html>502</html>`, retry: true},
		{name: "200 garbage", status: 200, body: `nope`, retry: true},
		{name: "result not a list", status: 200, body: `{"ok":true,"result":{}}`, retry: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ups, err := parseUpdates(tt.status, []byte(tt.body), DefaultTokenEnv)
			var refused *errRefused
			switch {
			case tt.refused != "":
				if !errors.As(err, &refused) || !strings.Contains(err.Error(), tt.refused) {
					t.Fatalf("err = %v, want a refusal with %q", err, tt.refused)
				}
			case tt.retry:
				after, ok := gateway.RetryAfter(err)
				if !ok || after != tt.retryWait {
					t.Fatalf("err = %v, want a RetryError after %s", err, tt.retryWait)
				}
			default:
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				if len(ups) != len(tt.wantIDs) {
					t.Fatalf("updates = %+v", ups)
				}
				for i, id := range tt.wantIDs {
					if ups[i].ID != id {
						t.Errorf("update %d id = %d, want %d", i, ups[i].ID, id)
					}
				}
			}
		})
	}
}

func FuzzParseUpdates(f *testing.F) {
	f.Add(200, []byte(`{"ok":true,"result":[{"update_id":5,"message":{"message_id":1,"chat":{"id":7},"from":{"id":7},"text":"hi","photo":[{"file_id":"a","width":1,"height":1}]}}]}`))
	f.Add(200, []byte(`{"ok":true,"result":[{"update_id":6,"callback_query":{"id":"q","from":{"id":7},"message":{"message_id":3,"chat":{"id":7}},"data":"d"}}]}`))
	f.Add(429, []byte(`{"ok":false,"error_code":429,"parameters":{"retry_after":-3}}`))
	f.Add(500, []byte(`<html>`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		ups, err := parseUpdates(status, body, DefaultTokenEnv)
		if err != nil && ups != nil {
			t.Fatalf("updates and an error")
		}
		if after, ok := gateway.RetryAfter(err); ok && after < 0 {
			t.Fatalf("negative wait %s", after)
		}
		for _, u := range ups {
			if u.Message != nil {
				_, _ = largestPhoto(u.Message.Photo)
			}
			if u.CallbackQuery != nil {
				_ = displayName(u.CallbackQuery.From)
			}
		}
	})
}
