package telegramfake

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/gatewaytest"
)

type answer struct {
	OK          bool              `json:"ok"`
	Result      []json.RawMessage `json:"result"`
	ErrorCode   int               `json:"error_code"`
	Description string            `json:"description"`
}

func call(t *testing.T, ctx context.Context, base, token, method string, form url.Values) (int, answer) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/bot"+token+"/"+method, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	var a answer
	// getUpdates' result is a list; other methods' results are left out.
	_ = json.Unmarshal(body, &a)
	if !a.OK && a.ErrorCode == 0 {
		var b struct {
			OK        bool `json:"ok"`
			ErrorCode int  `json:"error_code"`
		}
		_ = json.Unmarshal(body, &b)
		a.OK, a.ErrorCode = b.OK, b.ErrorCode
	}
	return resp.StatusCode, a
}

func ids(t *testing.T, a answer) []int64 {
	t.Helper()
	var out []int64
	for _, raw := range a.Result {
		var u struct {
			ID int64 `json:"update_id"`
		}
		if err := json.Unmarshal(raw, &u); err != nil {
			t.Fatal(err)
		}
		out = append(out, u.ID)
	}
	return out
}

func TestGetUpdatesOffsets(t *testing.T) {
	tests := []struct {
		name   string
		offset func(first int64) string
		want   func(first int64) []int64
		// after is what a following getUpdates without offset returns.
		after func(first int64) []int64
	}{
		{
			name:   "no offset returns every unconfirmed update",
			offset: func(int64) string { return "" },
			want:   func(f int64) []int64 { return []int64{f, f + 1, f + 2} },
			after:  func(f int64) []int64 { return []int64{f, f + 1, f + 2} },
		},
		{
			name:   "an offset confirms the updates below it",
			offset: func(f int64) string { return itoa(f + 2) },
			want:   func(f int64) []int64 { return []int64{f + 2} },
			after:  func(f int64) []int64 { return []int64{f + 2} },
		},
		{
			name:   "a negative offset keeps the last ones",
			offset: func(int64) string { return "-1" },
			want:   func(f int64) []int64 { return []int64{f + 2} },
			after:  func(f int64) []int64 { return []int64{f + 2} },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(t)
			for _, text := range []string{"a", "b", "c"} {
				p.Send(t, "5001", "1001", text)
			}
			_, a := call(t, t.Context(), p.URL(), Token, "getUpdates", url.Values{})
			first := ids(t, a)[0]
			form := url.Values{}
			if o := tt.offset(first); o != "" {
				form.Set("offset", o)
			}
			_, a = call(t, t.Context(), p.URL(), Token, "getUpdates", form)
			if got, want := ids(t, a), tt.want(first); !equal(got, want) {
				t.Errorf("updates = %v, want %v", got, want)
			}
			_, a = call(t, t.Context(), p.URL(), Token, "getUpdates", url.Values{})
			if got, want := ids(t, a), tt.after(first); !equal(got, want) {
				t.Errorf("then updates = %v, want %v", got, want)
			}
		})
	}
}

func TestRedeliverIgnoresOffset(t *testing.T) {
	p := New(t)
	p.Send(t, "5001", "1001", "a")
	_, a := call(t, t.Context(), p.URL(), Token, "getUpdates", url.Values{})
	id := ids(t, a)[0]
	_, a = call(t, t.Context(), p.URL(), Token, "getUpdates", url.Values{"offset": {itoa(id + 1)}})
	if len(a.Result) != 0 || p.Pending() != 0 {
		t.Fatalf("after confirming: %d updates, %d pending", len(a.Result), p.Pending())
	}
	p.Redeliver(t)
	_, a = call(t, t.Context(), p.URL(), Token, "getUpdates", url.Values{"offset": {itoa(id + 1)}})
	if got := ids(t, a); !equal(got, []int64{id}) {
		t.Errorf("redelivered %v, want [%d]", got, id)
	}
}

func TestTokenChecked(t *testing.T) {
	tests := []struct {
		name, path string
		want       int
	}{
		{"method with the token", "/bot" + Token + "/getMe", 200},
		{"method with another token", "/bot1:other/getMe", 401},
		{"file with another token", "/file/bot1:other/photos/file_1.jpg", 401},
		{"unknown method", "/bot" + Token + "/sendSticker", 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(t)
			resp, err := http.Get(p.URL() + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
}

func TestLongPollWakesAndConflicts(t *testing.T) {
	p := New(t)
	done := make(chan answer, 1)
	go func() {
		// Waits: nothing is queued yet.
		_, a := call(t, t.Context(), p.URL(), Token, "getUpdates", url.Values{"timeout": {"30"}})
		done <- a
	}()
	p.waitPolling(t)
	// A second poller terminates the first with 409.
	_, second := call(t, t.Context(), p.URL(), Token, "getUpdates", url.Values{"timeout": {"0"}})
	if !second.OK {
		t.Fatalf("second getUpdates: %+v", second)
	}
	if first := <-done; first.OK || first.ErrorCode != 409 {
		t.Errorf("first getUpdates = %+v, want 409", first)
	}

	go func() {
		_, a := call(t, t.Context(), p.URL(), Token, "getUpdates", url.Values{"timeout": {"30"}})
		done <- a
	}()
	p.waitPolling(t)
	p.Send(t, "5001", "1001", "wake up")
	if a := <-done; !a.OK || len(a.Result) != 1 {
		t.Errorf("woken getUpdates = %+v", a)
	}
}

func TestSendMessageValidates(t *testing.T) {
	tests := []struct {
		name string
		form url.Values
		want int
	}{
		{"plain", url.Values{"chat_id": {"5001"}, "text": {"hi"}}, 200},
		{"empty text", url.Values{"chat_id": {"5001"}, "text": {" "}}, 400},
		{"too long", url.Values{"chat_id": {"5001"}, "text": {strings.Repeat("😀", 2049)}}, 400},
		{"callback data too long", url.Values{"chat_id": {"5001"}, "text": {"x"}, "reply_markup": {`{"inline_keyboard":[[{"text":"b","callback_data":"` + strings.Repeat("d", 65) + `"}]]}`}}, 400},
		{"empty copy_text", url.Values{"chat_id": {"5001"}, "text": {"x"}, "reply_markup": {`{"inline_keyboard":[[{"text":"b","callback_data":"d","copy_text":{"text":""}}]]}`}}, 400},
		{"no chat", url.Values{"text": {"x"}}, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(t)
			status, _ := call(t, t.Context(), p.URL(), Token, "sendMessage", tt.form)
			if status != tt.want {
				t.Errorf("status = %d, want %d", status, tt.want)
			}
		})
	}
}

func TestPressNeedsTheButton(t *testing.T) {
	p := New(t)
	status, _ := call(t, t.Context(), p.URL(), Token, "sendMessage", url.Values{"chat_id": {"5001"}, "text": {"Run?"},
		"reply_markup": {`{"inline_keyboard":[[{"text":"Approve","callback_data":"approve:1"}]]}`}})
	if status != 200 {
		t.Fatalf("sendMessage: %d", status)
	}
	msgs := p.Messages("5001")
	ft := &fakeT{TB: t}
	p.Press(ft, gateway.MessageRef{ChatID: "5001", ID: msgs[0].ID}, "1001", "deny:1")
	if !ft.failed {
		t.Error("pressing a button the message does not carry passed")
	}
	p.Press(t, gateway.MessageRef{ChatID: "5001", ID: msgs[0].ID}, "1001", "approve:1")
	if p.Pending() != 1 {
		t.Errorf("pending = %d, want the press", p.Pending())
	}
}

type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Errorf(string, ...any) { f.failed = true }

// waitPolling waits until a getUpdates is waiting.
func (p *Platform) waitPolling(t *testing.T) {
	t.Helper()
	gatewaytest.Eventually(t, 10*time.Second, "a waiting getUpdates", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.waiting > 0
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func equal(a, b []int64) bool { return slices.Equal(a, b) }
