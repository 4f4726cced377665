package slack_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/slack"
	"github.com/reinhq/rein/gateway/slack/slackfake"
)

func TestNew(t *testing.T) {
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	both := map[string]string{"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"}
	tests := []struct {
		name    string
		cfg     slack.Config
		vars    map[string]string
		wantErr string // "" means it works
	}{
		{"defaults", slack.Config{}, both, ""},
		{"no token", slack.Config{}, map[string]string{"SLACK_SIGNING_SECRET": "s"}, "set SLACK_BOT_TOKEN"},
		{"no secret", slack.Config{}, map[string]string{"SLACK_BOT_TOKEN": "xoxb-1"}, "set SLACK_SIGNING_SECRET"},
		{"own names", slack.Config{TokenEnv: "T", SigningSecretEnv: "S"}, map[string]string{"T": "xoxb-1", "S": "s"}, ""},
		{"own name missing", slack.Config{TokenEnv: "MY_TOKEN"}, both, "set MY_TOKEN"},
		{"bad api_url", slack.Config{APIURL: "slack.com"}, both, "api_url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch, err := slack.New("work", tt.cfg, env(tt.vars))
			if tt.wantErr == "" {
				if err != nil || ch.Name() != "work" {
					t.Fatalf("New = %v, %v", ch, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New error = %v; want one saying %q", err, tt.wantErr)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	e := newEnv(t)
	l := e.ch.Limits()
	if !l.CanEdit || !l.Buttons || !l.Files || l.MaxText != 3900 || l.EditEvery < time.Second {
		t.Fatalf("Limits = %+v", l)
	}
}

func TestSend(t *testing.T) {
	tests := []struct {
		name, text string
	}{
		{"plain", "hello there"},
		{"markup stays text", "*not bold* <@U123> & <https://x|y> `code`"},
		{"unicode", "héllo 👋 世界"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			ref, err := e.ch.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: tt.text})
			if err != nil {
				t.Fatal(err)
			}
			if ref.ChatID != "5001" || ref.ID == "" {
				t.Fatalf("ref = %+v", ref)
			}
			msgs := e.p.Messages("5001")
			if len(msgs) != 1 || msgs[0].ID != ref.ID || msgs[0].Text != tt.text || len(msgs[0].Buttons) != 0 {
				t.Fatalf("messages = %+v; want one %q", msgs, tt.text)
			}
			raw, blocks := e.p.Raw("5001", ref.ID)
			if blocks != nil || strings.ContainsAny(raw, "<>") {
				t.Errorf("sent text %q, blocks %s: want escaped text and no blocks", raw, blocks)
			}
			calls := e.p.Calls()
			if last := calls[len(calls)-1]; last.Method != "chat.postMessage" || last.Params["mrkdwn"] != "false" {
				t.Errorf("call = %+v; want chat.postMessage with mrkdwn=false", last)
			}
		})
	}
}

func TestEdit(t *testing.T) {
	e := newEnv(t)
	btns := []gateway.Button{{Label: "Allow once", Data: "p1:once"}}
	ref, err := e.ch.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "working…", Buttons: btns})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		out  gateway.Outgoing
		want []gateway.Button
	}{
		{gateway.Outgoing{Text: "still working", Buttons: btns}, btns},
		{gateway.Outgoing{Text: "done"}, nil},
	}
	for i, s := range steps {
		if err := e.ch.Edit(t.Context(), ref, s.out); err != nil {
			t.Fatal(err)
		}
		m := e.p.Messages("5001")[0]
		if m.Text != s.out.Text || m.Edits != i+1 || !reflect.DeepEqual(m.Buttons, s.want) {
			t.Fatalf("after edit %d: %+v; want %q with %v", i+1, m, s.out.Text, s.want)
		}
	}
	if err := e.ch.Edit(t.Context(), gateway.MessageRef{ChatID: "5001", ID: "1.2"}, gateway.Outgoing{Text: "x"}); err == nil {
		t.Error("editing a message that does not exist did not fail")
	}
}

func TestButtonsArePressed(t *testing.T) {
	long := strings.Repeat("word ", 780) // 3900 runes: two section blocks
	tests := []struct {
		name, text string
	}{
		{"short", "🔐 Allow write_file?"},
		{"longest", long[:3900]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			btns := []gateway.Button{{Label: "Allow once", Data: "p1:once"}, {Label: "Deny", Data: "p1:deny"}}
			ref, err := e.ch.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: tt.text, Buttons: btns})
			if err != nil {
				t.Fatal(err)
			}
			m := e.p.Messages("5001")[0]
			if m.Text != tt.text || !reflect.DeepEqual(m.Buttons, btns) {
				t.Fatalf("message = %+v", m)
			}
			// Block Kit: plain_text sections, then an actions block of buttons.
			_, raw := e.p.Raw("5001", ref.ID)
			var blocks []struct {
				Type string `json:"type"`
				Text *struct {
					Type string `json:"type"`
				} `json:"text"`
				Elements []struct {
					Type, Value string
					ActionID    string `json:"action_id"`
				} `json:"elements"`
			}
			if err := json.Unmarshal(raw, &blocks); err != nil {
				t.Fatal(err)
			}
			last := blocks[len(blocks)-1]
			if blocks[0].Type != "section" || blocks[0].Text.Type != "plain_text" || last.Type != "actions" ||
				len(last.Elements) != 2 || last.Elements[1].Type != "button" || last.Elements[1].Value != "p1:deny" {
				t.Fatalf("blocks = %s", raw)
			}
			e.p.Press(t, ref, "1001", "p1:deny")
			e.h.wait(t, 1)
			got := e.h.presses()[0]
			want := gateway.Action{ChatID: "5001", UserID: "1001", UserName: "user1001", ID: got.ID, Data: "p1:deny", Message: ref}
			if got != want || !strings.HasPrefix(got.ID, "press/") {
				t.Fatalf("action = %+v; want %+v", got, want)
			}
		})
	}
}

func TestThrottled(t *testing.T) {
	e := newEnv(t)
	ref, err := e.ch.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "a"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		call func() error
	}{
		{"send", func() error {
			_, err := e.ch.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "b"})
			return err
		}},
		{"edit", func() error { return e.ch.Edit(t.Context(), ref, gateway.Outgoing{Text: "c"}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.p.Throttle(1, 3*time.Second)
			err := tt.call()
			var re *gateway.RetryError
			if !errors.As(err, &re) || re.After != 3*time.Second {
				t.Fatalf("err = %v; want a *gateway.RetryError after 3s", err)
			}
			if err := tt.call(); err != nil {
				t.Fatalf("after the 429: %v", err)
			}
		})
	}
	if e.p.Throttled() != 2 {
		t.Errorf("Throttled = %d; want 2", e.p.Throttled())
	}
}

func TestBadToken(t *testing.T) {
	p := slackfake.New(t)
	ch, err := slack.New("slack", slack.Config{APIURL: p.URL()}, func(k string) string {
		if k == "SLACK_BOT_TOKEN" {
			return "xoxb-wrong"
		}
		return "secret"
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ch.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "a"})
	if _, retry := gateway.RetryAfter(err); err == nil || retry || !strings.Contains(err.Error(), "invalid_auth") {
		t.Fatalf("err = %v; want a permanent invalid_auth", err)
	}
}

func TestFilesOut(t *testing.T) {
	e := newEnv(t)
	png := []byte("\x89PNG\r\n\x1a\n0000")
	ref, err := e.ch.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "here is the chart",
		Files: []gateway.Attachment{{Name: "chart.png", MIME: "image/png", Data: png}}})
	if err != nil {
		t.Fatal(err)
	}
	msgs := e.p.Messages("5001")
	if len(msgs) != 2 || msgs[0].ID != ref.ID || msgs[0].Text != "here is the chart" {
		t.Fatalf("messages = %+v", msgs)
	}
	if f := msgs[1].Files; len(f) != 1 || f[0].Name != "chart.png" || string(f[0].Data) != string(png) {
		t.Fatalf("files = %+v", f)
	}
}
