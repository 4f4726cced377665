package telegram

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/gatewaytest"
	"github.com/reinhq/rein/gateway/telegram/telegramfake"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		env     map[string]string
		wantErr string
	}{
		{name: "defaults", env: map[string]string{"TELEGRAM_BOT_TOKEN": "1:abc"}},
		{name: "missing token names the variable", wantErr: "TELEGRAM_BOT_TOKEN is not set: create a bot with @BotFather"},
		{name: "custom variable", cfg: Config{TokenEnv: "OPS_BOT"}, env: map[string]string{"TELEGRAM_BOT_TOKEN": "1:abc"}, wantErr: "OPS_BOT is not set"},
		{name: "custom variable set", cfg: Config{TokenEnv: "OPS_BOT"}, env: map[string]string{"OPS_BOT": "1:abc"}},
		{name: "token with a slash", env: map[string]string{"TELEGRAM_BOT_TOKEN": "1:a/b"}, wantErr: "does not look like a bot token"},
		{name: "bad api_url", cfg: Config{APIURL: "ftp://x"}, env: map[string]string{"TELEGRAM_BOT_TOKEN": "1:abc"}, wantErr: "api_url"},
		{name: "poll_timeout too long", cfg: Config{PollTimeout: time.Hour}, env: map[string]string{"TELEGRAM_BOT_TOKEN": "1:abc"}, wantErr: "poll_timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New("tg", tt.cfg, func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "1:a") {
					t.Errorf("the error shows the token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if c.Name() != "tg" {
				t.Errorf("Name = %q", c.Name())
			}
			if l := c.Limits(); l.MaxText != 4096 || !l.CanEdit || !l.Buttons || !l.Files || l.EditEvery < time.Second {
				t.Errorf("Limits = %+v", l)
			}
		})
	}
}

var pngData = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{1}, 64)...)

func TestSend(t *testing.T) {
	tests := []struct {
		name string
		out  gateway.Outgoing
		want []gatewaytest.Message
	}{
		{
			name: "plain text stays plain",
			out:  gateway.Outgoing{ChatID: "5001", Text: "*not bold* <b>x</b> _y_"},
			want: []gatewaytest.Message{{Text: "*not bold* <b>x</b> _y_"}},
		},
		{
			name: "buttons become an inline keyboard",
			out: gateway.Outgoing{ChatID: "5001", Text: "Run ls?", Buttons: []gateway.Button{
				{Label: "Approve", Data: "approve:p1"}, {Label: "Deny", Data: "deny:p1"},
			}},
			want: []gatewaytest.Message{{Text: "Run ls?", Buttons: []gateway.Button{
				{Label: "Approve", Data: "approve:p1"}, {Label: "Deny", Data: "deny:p1"},
			}}},
		},
		{
			name: "files follow the text: an image as a photo, the rest as documents",
			out: gateway.Outgoing{ChatID: "5002", Text: "Here", Files: []gateway.Attachment{
				{Name: "chart.png", MIME: "image/png", Data: pngData},
				{Name: "notes.txt", MIME: "text/plain", Data: []byte("hello")},
			}},
			want: []gatewaytest.Message{
				{Text: "Here"},
				{Files: []gateway.Attachment{{Name: "chart.png", MIME: "image/png", Data: pngData}}},
				{Files: []gateway.Attachment{{Name: "notes.txt", MIME: "text/plain", Data: []byte("hello")}}},
			},
		},
		{
			name: "files without text",
			out:  gateway.Outgoing{ChatID: "5002", Files: []gateway.Attachment{{Name: "a.csv", MIME: "text/csv", Data: []byte("a,b")}}},
			want: []gatewaytest.Message{{Files: []gateway.Attachment{{Name: "a.csv", MIME: "text/csv", Data: []byte("a,b")}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := telegramfake.New(t)
			c := newChannel(t, p)
			ref, err := c.Send(t.Context(), tt.out)
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := p.Messages(tt.out.ChatID)
			if len(got) != len(tt.want) {
				t.Fatalf("messages = %+v, want %d", got, len(tt.want))
			}
			if ref.ChatID != tt.out.ChatID || ref.ID != got[0].ID {
				t.Errorf("ref = %+v, want chat %s message %s", ref, tt.out.ChatID, got[0].ID)
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Text != w.Text {
					t.Errorf("message %d text = %q, want %q", i, g.Text, w.Text)
				}
				if !equalButtons(g.Buttons, w.Buttons) {
					t.Errorf("message %d buttons = %+v, want %+v", i, g.Buttons, w.Buttons)
				}
				if len(g.Files) != len(w.Files) {
					t.Fatalf("message %d files = %d, want %d", i, len(g.Files), len(w.Files))
				}
				for j := range w.Files {
					if g.Files[j].Name != w.Files[j].Name || g.Files[j].MIME != w.Files[j].MIME || !bytes.Equal(g.Files[j].Data, w.Files[j].Data) {
						t.Errorf("message %d file %d = %s %s %q", i, j, g.Files[j].Name, g.Files[j].MIME, g.Files[j].Data)
					}
				}
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

func TestSendRefusesOversizeButtonData(t *testing.T) {
	p := telegramfake.New(t)
	c := newChannel(t, p)
	_, err := c.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "x", Buttons: []gateway.Button{{Label: "b", Data: strings.Repeat("d", 65)}}})
	if err == nil || !strings.Contains(err.Error(), "1 to 64") {
		t.Fatalf("err = %v", err)
	}
	if n := len(p.Messages("5001")); n != 0 {
		t.Errorf("%d messages sent", n)
	}
}

func TestEdit(t *testing.T) {
	buttons := []gateway.Button{{Label: "Approve", Data: "approve:1"}}
	tests := []struct {
		name      string
		first     gateway.Outgoing
		edit      gateway.Outgoing
		wantText  string
		wantBtns  []gateway.Button
		wantEdits int
	}{
		{
			name:      "text changes",
			first:     gateway.Outgoing{ChatID: "5001", Text: "working…"},
			edit:      gateway.Outgoing{ChatID: "5001", Text: "done"},
			wantText:  "done",
			wantEdits: 1,
		},
		{
			name:      "buttons go when the edit has none",
			first:     gateway.Outgoing{ChatID: "5001", Text: "Run?", Buttons: buttons},
			edit:      gateway.Outgoing{ChatID: "5001", Text: "Approved"},
			wantText:  "Approved",
			wantEdits: 1,
		},
		{
			name:      "buttons stay when the edit keeps them",
			first:     gateway.Outgoing{ChatID: "5001", Text: "Run?", Buttons: buttons},
			edit:      gateway.Outgoing{ChatID: "5001", Text: "Run? (asked again)", Buttons: buttons},
			wantText:  "Run? (asked again)",
			wantBtns:  buttons,
			wantEdits: 1,
		},
		{
			name:      "an edit that changes nothing is fine",
			first:     gateway.Outgoing{ChatID: "5001", Text: "same"},
			edit:      gateway.Outgoing{ChatID: "5001", Text: "same"},
			wantText:  "same",
			wantEdits: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := telegramfake.New(t)
			c := newChannel(t, p)
			ref, err := c.Send(t.Context(), tt.first)
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			if err := c.Edit(t.Context(), ref, tt.edit); err != nil {
				t.Fatalf("Edit: %v", err)
			}
			got := p.Messages("5001")
			if len(got) != 1 {
				t.Fatalf("messages = %+v", got)
			}
			if got[0].Text != tt.wantText || got[0].Edits != tt.wantEdits || !equalButtons(got[0].Buttons, tt.wantBtns) {
				t.Errorf("message = %+v, want text %q, %d edits, buttons %+v", got[0], tt.wantText, tt.wantEdits, tt.wantBtns)
			}
		})
	}
}

func TestEditUnknownMessageIsFinal(t *testing.T) {
	p := telegramfake.New(t)
	c := newChannel(t, p)
	err := c.Edit(t.Context(), gateway.MessageRef{ChatID: "5001", ID: "999"}, gateway.Outgoing{ChatID: "5001", Text: "x"})
	if err == nil {
		t.Fatal("Edit of a missing message succeeded")
	}
	if _, retry := gateway.RetryAfter(err); retry {
		t.Errorf("err = %v is a RetryError", err)
	}
}

func TestThrottle(t *testing.T) {
	tests := []struct {
		name string
		call func(t *testing.T, c *Channel, ref gateway.MessageRef) error
	}{
		{"send", func(t *testing.T, c *Channel, _ gateway.MessageRef) error {
			_, err := c.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "hi"})
			return err
		}},
		{"edit", func(t *testing.T, c *Channel, ref gateway.MessageRef) error {
			return c.Edit(t.Context(), ref, gateway.Outgoing{ChatID: "5001", Text: "edited"})
		}},
		{"send file", func(t *testing.T, c *Channel, _ gateway.MessageRef) error {
			_, err := c.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Files: []gateway.Attachment{{Name: "a.txt", Data: []byte("a")}}})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := telegramfake.New(t)
			c := newChannel(t, p)
			ref, err := c.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "first"})
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			p.Throttle(1, 3*time.Second)
			err = tt.call(t, c, ref)
			after, ok := gateway.RetryAfter(err)
			if !ok || after != 3*time.Second {
				t.Fatalf("err = %v, want a RetryError after 3s", err)
			}
			if p.Throttled() != 1 {
				t.Errorf("Throttled = %d", p.Throttled())
			}
			if err := tt.call(t, c, ref); err != nil {
				t.Fatalf("retry: %v", err)
			}
		})
	}
}

func TestOutageIsRetried(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		retry   bool
	}{
		{"502 from a proxy", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte("<html>bad gateway</html>"))
		}, true},
		{"500 from the Bot API", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"ok":false,"error_code":500,"description":"Internal Server Error"}`))
		}, true},
		{"403 blocked by the user", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"ok":false,"error_code":403,"description":"Forbidden: bot was blocked by the user"}`))
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			t.Cleanup(srv.Close)
			c, err := New("telegram", Config{APIURL: srv.URL}, fakeEnv)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "hi"})
			after, retry := gateway.RetryAfter(err)
			if err == nil || retry != tt.retry || after != 0 {
				t.Fatalf("err = %v, retry %v after %s; want retry %v", err, retry, after, tt.retry)
			}
		})
	}
}

func TestNetworkErrorIsRetriedAndHidesToken(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c, err := New("telegram", Config{APIURL: url}, fakeEnv)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "hi"})
	if _, retry := gateway.RetryAfter(err); !retry {
		t.Fatalf("err = %v, want a RetryError", err)
	}
	if strings.Contains(err.Error(), telegramfake.Token) {
		t.Errorf("the error shows the token: %v", err)
	}
	_, err = c.fetch(t.Context(), 0, 0, 1)
	if _, retry := gateway.RetryAfter(err); !retry || strings.Contains(err.Error(), telegramfake.Token) {
		t.Errorf("getUpdates err = %v", err)
	}
}

func TestWrongTokenIsFinal(t *testing.T) {
	p := telegramfake.New(t)
	c, err := New("telegram", Config{APIURL: p.URL(), TokenEnv: "MY_TG"}, func(string) string { return "42:wrong" })
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "hi"})
	if _, retry := gateway.RetryAfter(err); err == nil || retry || !strings.Contains(err.Error(), "MY_TG") {
		t.Errorf("Send err = %v", err)
	}
	err = c.Receive(t.Context(), &recorder{})
	if err == nil || !strings.Contains(err.Error(), "the bot token was refused: check MY_TG") {
		t.Errorf("Receive err = %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "42:wrong") {
		t.Errorf("the error shows the token: %v", err)
	}
}

func TestFitText(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantLen int
		clipped bool
	}{
		{"short", "hello", 5, false},
		{"4096 ascii", strings.Repeat("a", 4096), 4096, false},
		{"4096 runes of emoji", strings.Repeat("😀", 4096), 4096, true},
		{"2048 emoji fit exactly", strings.Repeat("😀", 2048), 4096, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fitText(tt.in)
			if n := utf16Len(got); n != tt.wantLen && !(tt.clipped && n <= 4096) {
				t.Errorf("UTF-16 length %d, want %d", n, tt.wantLen)
			}
			if clipped := got != tt.in; clipped != tt.clipped {
				t.Errorf("clipped = %v, want %v", clipped, tt.clipped)
			}
			if tt.clipped && !strings.HasSuffix(got, "…") {
				t.Errorf("clipped text does not end in …")
			}
		})
	}
}

func TestSendLongEmojiText(t *testing.T) {
	p := telegramfake.New(t)
	c := newChannel(t, p)
	if _, err := c.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: strings.Repeat("😀", 4096)}); err != nil {
		t.Fatalf("Send: %v", err)
	}
}

func TestBrokenImageFallsBackToDocument(t *testing.T) {
	p := telegramfake.New(t)
	c := newChannel(t, p)
	_, err := c.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Files: []gateway.Attachment{{Name: "x.png", MIME: "image/png", Data: []byte("not an image")}}})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := p.Messages("5001")
	if len(got) != 1 || len(got[0].Files) != 1 || string(got[0].Files[0].Data) != "not an image" {
		t.Errorf("messages = %+v", got)
	}
}
