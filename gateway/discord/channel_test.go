package discord

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/discord/discordfake"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		env     map[string]string
		wantErr string
		token   string
	}{
		{name: "default env", env: map[string]string{"DISCORD_BOT_TOKEN": "abc"}, token: "Bot abc"},
		{name: "Bot prefix kept once", env: map[string]string{"DISCORD_BOT_TOKEN": "Bot abc"}, token: "Bot abc"},
		{name: "own env", cfg: Config{TokenEnv: "MY_TOKEN"}, env: map[string]string{"MY_TOKEN": "xyz"}, token: "Bot xyz"},
		{name: "missing", env: map[string]string{}, wantErr: "DISCORD_BOT_TOKEN is not set"},
		{name: "missing own", cfg: Config{TokenEnv: "MY_TOKEN"}, env: map[string]string{"DISCORD_BOT_TOKEN": "abc"}, wantErr: "MY_TOKEN is not set"},
		{name: "blanks", env: map[string]string{"DISCORD_BOT_TOKEN": "a b"}, wantErr: "does not look like a bot token"},
		{name: "bad api url", cfg: Config{APIURL: "ftp://x"}, env: map[string]string{"DISCORD_BOT_TOKEN": "abc"}, wantErr: "api_url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New("discord", tt.cfg, func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "abc") {
					t.Fatalf("error shows the token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if c.token != tt.token || c.Name() != "discord" {
				t.Fatalf("token %q name %q", c.token, c.Name())
			}
		})
	}
}

func TestLimits(t *testing.T) {
	c := newChannel(t, discordfake.New(t))
	l := c.Limits()
	if l.MaxText != 2000 || !l.CanEdit || l.EditEvery < time.Second || !l.Buttons || !l.Files {
		t.Fatalf("Limits = %+v", l)
	}
}

func TestSendEdit(t *testing.T) {
	p := discordfake.New(t)
	c := newChannel(t, p)
	ctx := t.Context()
	ref, err := c.Send(ctx, gateway.Outgoing{ChatID: "5001", Text: "hello @everyone *plain*"})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if ref.ChatID != "5001" || ref.ID == "" {
		t.Fatalf("ref = %+v", ref)
	}
	msgs := p.Messages("5001")
	if len(msgs) != 1 || msgs[0].ID != ref.ID || msgs[0].Text != "hello @everyone *plain*" {
		t.Fatalf("messages = %+v", msgs)
	}
	if err := c.Edit(ctx, ref, gateway.Outgoing{ChatID: "5001", Text: "edited"}); err != nil {
		t.Fatalf("Edit: %v", err)
	}
	msgs = p.Messages("5001")
	if len(msgs) != 1 || msgs[0].Text != "edited" || msgs[0].Edits != 1 {
		t.Fatalf("after edit = %+v", msgs)
	}
}

func TestButtons(t *testing.T) {
	tests := []struct {
		name    string
		buttons int
		rows    []int
	}{
		{name: "one row", buttons: 2, rows: []int{2}},
		{name: "five per row", buttons: 7, rows: []int{5, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := discordfake.New(t)
			c := newChannel(t, p)
			var bs []gateway.Button
			for i := range tt.buttons {
				bs = append(bs, gateway.Button{Label: "Allow " + string(rune('a'+i)), Data: "perm:" + string(rune('a'+i))})
			}
			ref, err := c.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "may I?", Buttons: bs})
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			comps := p.Components("5001", ref.ID)
			if len(comps) != len(tt.rows) {
				t.Fatalf("rows = %+v", comps)
			}
			for i, row := range comps {
				if row.Type != 1 || len(row.Components) != tt.rows[i] {
					t.Fatalf("row %d = %+v", i, row)
				}
				for _, b := range row.Components {
					if b.Type != 2 || b.CustomID == "" || b.Style == 0 {
						t.Fatalf("button = %+v", b)
					}
				}
			}
			got := p.Messages("5001")[0].Buttons
			if len(got) != len(bs) || got[0] != bs[0] {
				t.Fatalf("buttons = %+v, want %+v", got, bs)
			}
			// An edit without buttons removes them.
			if err := c.Edit(t.Context(), ref, gateway.Outgoing{ChatID: "5001", Text: "allowed"}); err != nil {
				t.Fatalf("Edit: %v", err)
			}
			if got := p.Messages("5001")[0]; len(got.Buttons) != 0 || got.Text != "allowed" {
				t.Fatalf("after edit = %+v", got)
			}
		})
	}
}

func TestSendFiles(t *testing.T) {
	p := discordfake.New(t)
	c := newChannel(t, p)
	files := []gateway.Attachment{
		{Name: "report.txt", MIME: "text/plain", Data: []byte("all good")},
		{Name: "chart.png", MIME: "image/png", Data: []byte("\x89PNG fake")},
	}
	ref, err := c.Send(t.Context(), gateway.Outgoing{ChatID: "5002", Text: "here", Files: files})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	msgs := p.Messages("5002")
	if len(msgs) != 1 || msgs[0].ID != ref.ID || len(msgs[0].Files) != 2 {
		t.Fatalf("messages = %+v", msgs)
	}
	for i, f := range msgs[0].Files {
		if f.Name != files[i].Name || f.MIME != files[i].MIME || string(f.Data) != string(files[i].Data) {
			t.Fatalf("file %d = %+v, want %+v", i, f, files[i])
		}
	}
}

// discordgo sleeps Retry-After and retries a 429 itself: the message
// arrives, and the fake served the 429s.
func TestThrottledSendArrives(t *testing.T) {
	p := discordfake.New(t)
	c := newChannel(t, p)
	p.Throttle(2, time.Second)
	ref, err := c.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "after the wait"})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if n := p.Throttled(); n != 2 {
		t.Fatalf("Throttled = %d, want 2", n)
	}
	p.Throttle(1, time.Second)
	if err := c.Edit(t.Context(), ref, gateway.Outgoing{ChatID: "5001", Text: "edited after the wait"}); err != nil {
		t.Fatalf("Edit: %v", err)
	}
	if n := p.Throttled(); n != 3 {
		t.Fatalf("Throttled = %d, want 3", n)
	}
	msgs := p.Messages("5001")
	if len(msgs) != 1 || msgs[0].Text != "edited after the wait" {
		t.Fatalf("messages = %+v", msgs)
	}
}

func TestSendErrors(t *testing.T) {
	tests := []struct {
		name      string
		setup     func(p *discordfake.Platform, c *Channel)
		retry     bool
		wantAfter time.Duration
	}{
		{name: "5xx is retried", setup: func(p *discordfake.Platform, _ *Channel) { p.Fail(1, 500) }, retry: true},
		{name: "503 is retried", setup: func(p *discordfake.Platform, _ *Channel) { p.Fail(1, 503) }, retry: true},
		{name: "403 is not", setup: func(p *discordfake.Platform, _ *Channel) { p.Fail(1, 403) }},
		{name: "429 without the library's retry", setup: func(p *discordfake.Platform, c *Channel) {
			c.rest.ShouldRetryOnRateLimit = false
			p.Throttle(1, 2*time.Second)
		}, retry: true, wantAfter: 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := discordfake.New(t)
			c := newChannel(t, p)
			tt.setup(p, c)
			_, err := c.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "x"})
			if err == nil {
				t.Fatal("Send succeeded")
			}
			after, retry := gateway.RetryAfter(err)
			if retry != tt.retry || after != tt.wantAfter {
				t.Fatalf("RetryAfter(%v) = %v, %v; want %v, %v", err, after, retry, tt.wantAfter, tt.retry)
			}
			if strings.Contains(err.Error(), discordfake.Token) {
				t.Fatalf("error shows the token: %v", err)
			}
		})
	}
}

func TestRetryableStatus(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		retry bool
		after time.Duration
	}{
		{name: "rate limit error", err: &discordgo.RateLimitError{RateLimit: &discordgo.RateLimit{TooManyRequests: &discordgo.TooManyRequests{RetryAfter: 1500 * time.Millisecond}}}, retry: true, after: 1500 * time.Millisecond},
		{name: "502 given up", err: errors.New("Exceeded Max retries HTTP 502 Bad Gateway, "), retry: true},
		{name: "plain", err: errors.New("boom")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			after, retry := retryable(tt.err)
			if after != tt.after || retry != tt.retry {
				t.Fatalf("retryable = %v, %v; want %v, %v", after, retry, tt.after, tt.retry)
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 3, "hel"},
		{"héllo", 2, "hé"},
	}
	for _, tt := range tests {
		if got := truncate(tt.in, tt.n); got != tt.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
	if got := truncateBytes("ééé", 3); got != "é" {
		t.Errorf("truncateBytes = %q", got)
	}
}
