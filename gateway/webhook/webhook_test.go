package webhook

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/gateway"
)

const secret = "0123456789abcdef0123456789abcdef"

// recorder is a Handler keeping what it got.
type recorder struct {
	mu   sync.Mutex
	msgs []gateway.Inbound
	acts []gateway.Action
	fail error
}

func (r *recorder) HandleMessage(_ context.Context, m gateway.Inbound) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, m)
	return r.fail
}

func (r *recorder) HandleAction(_ context.Context, a gateway.Action) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acts = append(r.acts, a)
	return r.fail
}

func newChannel(t testing.TB) *Channel {
	ch, err := New("hook", Config{CallbackURL: "http://127.0.0.1:1/cb"}, func(string) string { return secret })
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// post sends body to the handler signed at at with key.
func post(h http.Handler, path, body string, key []byte, at time.Time) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	if key != nil {
		ts, sig := Sign(key, at, []byte(body))
		req.Header.Set("X-Rein-Timestamp", ts)
		req.Header.Set("X-Rein-Signature", sig)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// Only a request signed with the secret, recently, reaches the handler;
// a stored one is answered 200, one the handler could not store 500.
func TestHandlerVerifies(t *testing.T) {
	ok := `{"id":"1","chat_id":"c","user_id":"u","text":"hi","attachments":[{"name":"a.png","mime":"image/png","data":"iVBORw=="}]}`
	cases := []struct {
		name, path, body string
		key              []byte
		at               time.Time
		fail             error
		want             int
	}{
		{"signed", "/messages", ok, []byte(secret), time.Now(), nil, 200},
		{"unsigned", "/messages", ok, nil, time.Now(), nil, 401},
		{"wrong key", "/messages", ok, []byte("another secret of some length"), time.Now(), nil, 401},
		{"stale", "/messages", ok, []byte(secret), time.Now().Add(-6 * time.Minute), nil, 401},
		{"not json", "/messages", "{", []byte(secret), time.Now(), nil, 400},
		{"no chat", "/messages", `{"id":"1","user_id":"u","text":"x"}`, []byte(secret), time.Now(), nil, 400},
		{"not stored", "/messages", ok, []byte(secret), time.Now(), context.DeadlineExceeded, 500},
		{"action", "/actions", `{"id":"a","chat_id":"c","user_id":"u","message_id":"m","data":"perm:x:once"}`, []byte(secret), time.Now(), nil, 200},
		{"get", "/nothing", ok, []byte(secret), time.Now(), nil, 404},
		{"too large", "/messages", `{"text":"` + strings.Repeat("x", maxBody) + `"}`, []byte(secret), time.Now(), nil, 413},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{fail: tc.fail}
			w := post(newChannel(t).HTTPHandler(rec), tc.path, tc.body, tc.key, tc.at)
			if w.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.want, w.Body)
			}
			reached := len(rec.msgs) + len(rec.acts)
			if (tc.want == 200 || tc.want == 500) != (reached == 1) {
				t.Errorf("the handler got %d updates", reached)
			}
		})
	}
	rec := &recorder{}
	post(newChannel(t).HTTPHandler(rec), "/messages", ok, []byte(secret), time.Now())
	if m := rec.msgs[0]; m.ChatID != "c" || m.UserID != "u" || m.ID != "1" || len(m.Attachments) != 1 || !bytes.HasPrefix(m.Attachments[0].Data, []byte("\x89PNG")) {
		t.Errorf("the message: %+v", m)
	}
}

// Replies go out signed; 429 and 5xx are retryable with Retry-After, 4xx
// final.
func TestSendStatuses(t *testing.T) {
	for _, tc := range []struct {
		status, retryAfter int
		retry              bool
		after              time.Duration
	}{{200, 0, false, 0}, {429, 3, true, 3 * time.Second}, {503, 0, true, 0}, {404, 0, false, 0}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body := new(bytes.Buffer)
			body.ReadFrom(r.Body)
			if err := Verify([]byte(secret), time.Now(), r.Header.Get("X-Rein-Timestamp"), r.Header.Get("X-Rein-Signature"), body.Bytes()); err != nil {
				t.Errorf("the reply is not signed: %v", err)
			}
			if tc.retryAfter > 0 {
				w.Header().Set("Retry-After", "3")
			}
			w.WriteHeader(tc.status)
			w.Write([]byte(`{"message_id":"9"}`))
		}))
		ch, err := New("hook", Config{CallbackURL: srv.URL}, func(string) string { return secret })
		if err != nil {
			t.Fatal(err)
		}
		ref, err := ch.Send(t.Context(), gateway.Outgoing{ChatID: "c", Text: "hi"})
		after, retry := gateway.RetryAfter(err)
		switch {
		case tc.status == 200 && (err != nil || ref.ID != "9"):
			t.Errorf("200: %v, %+v", err, ref)
		case tc.status != 200 && (err == nil || retry != tc.retry || after != tc.after):
			t.Errorf("%d: err %v, retry %v after %s", tc.status, err, retry, after)
		}
		srv.Close()
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New("hook", Config{CallbackURL: "http://x/y"}, func(string) string { return "short" }); err == nil || !strings.Contains(err.Error(), "REIN_WEBHOOK_SECRET") {
		t.Errorf("a short secret: %v", err)
	}
	if _, err := New("hook", Config{CallbackURL: "ftp://x"}, func(string) string { return secret }); err == nil || !strings.Contains(err.Error(), "callback_url") {
		t.Errorf("a bad callback: %v", err)
	}
}

// FuzzHandler: whatever is posted, the handler answers without panicking,
// and nothing unsigned reaches the gateway.
func FuzzHandler(f *testing.F) {
	f.Add(uint8(0), `{"id":"1","chat_id":"c","user_id":"u","text":"hi"}`, true)
	f.Add(uint8(1), `{"id":"1","chat_id":"c","user_id":"u","data":"x"}`, false)
	f.Fuzz(func(t *testing.T, route uint8, body string, sign bool) {
		path := []string{"/messages", "/actions", "/other"}[int(route)%3]
		rec := &recorder{}
		var key []byte
		if sign {
			key = []byte(secret)
		}
		post(newChannel(t).HTTPHandler(rec), path, body, key, time.Now())
		if !sign && len(rec.msgs)+len(rec.acts) > 0 {
			t.Fatal("an unsigned request reached the handler")
		}
	})
}
