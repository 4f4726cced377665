package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/gateway/webhook/webhookfake"
	"github.com/reinhq/rein/llm/llmtest"
)

// writeGatewayFile writes the user's gateway.yaml.
func (te *testEnv) writeGatewayFile(content string) {
	te.t.Helper()
	dir := filepath.Join(te.home, ".config", "rein")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		te.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gateway.yaml"), []byte(content), 0o600); err != nil {
		te.t.Fatal(err)
	}
}

// GW-2: a bad gateway.yaml is refused before anything starts, naming what
// to fix.
func TestGatewayFileErrors(t *testing.T) {
	cases := []struct {
		name, file string
		env        map[string]string
		want       string
	}{
		{"no file", "", nil, "gateway.yaml does not exist"},
		{"no channels", "listen: 127.0.0.1:0\n", nil, "no channels"},
		{"unknown type", "channels:\n  x:\n    type: icq\n", nil, `channels.x.type "icq": want one of discord, feishu, slack, telegram, webhook`},
		{"typo in a channel", "channels:\n  tg:\n    type: telegram\n    alow: [\"1\"]\n", map[string]string{"TELEGRAM_BOT_TOKEN": "1:x"},
			`channels.tg: unknown key "alow" (line 4)`},
		{"typo at the top", "chanels: {}\n", nil, "field chanels not found"},
		{"missing secret", "channels:\n  tg:\n    type: telegram\n", nil, "TELEGRAM_BOT_TOKEN"},
		{"webhook without callback", "channels:\n  h:\n    type: webhook\n", map[string]string{"REIN_WEBHOOK_SECRET": webhookfake.Secret}, "callback_url"},
		{"bypass", "channels:\n  h:\n    type: webhook\n    callback_url: http://127.0.0.1:1/x\n    permission_mode: bypass\n",
			map[string]string{"REIN_WEBHOOK_SECRET": webhookfake.Secret}, "permission_mode bypass would run every tool call"},
		{"workspace missing", "channels:\n  h:\n    type: webhook\n    callback_url: http://127.0.0.1:1/x\n    workspace: /no/such/dir\n",
			map[string]string{"REIN_WEBHOOK_SECRET": webhookfake.Secret}, "channels.h.workspace"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEnv(t)
			for k, v := range tc.env {
				te.env[k] = v
			}
			if tc.file != "" {
				te.writeGatewayFile(tc.file)
			}
			_, errs := te.mustRun(ExitUsage, "gateway")
			if !strings.Contains(errs, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, errs)
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer safe for a writer and a reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// GW-2: rein gateway, as a user runs it, answers a chat on the webhook
// channel with the configured model and stops cleanly.
func TestGatewayCommand(t *testing.T) {
	te := newTestEnv(t)
	te.script("m", llmtest.Reply{Text: "hello from the gateway"})
	p := webhookfake.New(t)
	te.env["REIN_MODEL"] = "scripted/m"
	te.env["REIN_SANDBOX"] = "off"
	te.env["REIN_WEBHOOK_SECRET"] = webhookfake.Secret
	te.writeGatewayFile("persona: false\nchannels:\n  hook:\n    type: webhook\n    callback_url: " + p.URL() + "\n    allow: [\"1001\"]\n")
	var stdout bytes.Buffer
	var stderr lockedBuffer
	a := te.app(&stdout, nil)
	a.Stderr = &stderr
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		code <- a.Run(ctx, []string{"gateway", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--log-level", "error"})
	}()
	addr := regexp.MustCompile(`receiving on (http://127\.0\.0\.1:\d+)`)
	deadline := time.Now().Add(30 * time.Second)
	var m []string
	for m = addr.FindStringSubmatch(stderr.String()); m == nil; m = addr.FindStringSubmatch(stderr.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("the gateway did not start:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.Target(m[1] + "/hook")
	p.Send(t, "5001", "1001", "hi")
	for {
		msgs := p.Messages("5001")
		if len(msgs) > 0 && strings.Contains(msgs[len(msgs)-1].Text, "hello from the gateway") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reply: %+v\n%s", msgs, stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if c := <-code; c != ExitOK {
		t.Fatalf("exit %d:\n%s", c, stderr.String())
	}
}

// rein gateway --check lists the channels of a good file and starts
// nothing.
func TestGatewayCheck(t *testing.T) {
	te := newTestEnv(t)
	te.env["REIN_WEBHOOK_SECRET"] = webhookfake.Secret
	te.env["TELEGRAM_BOT_TOKEN"] = "123:abc"
	te.writeGatewayFile("channels:\n  hook:\n    type: webhook\n    callback_url: http://127.0.0.1:1/x\n    allow: [\"*\"]\n" +
		"  tg:\n    type: telegram\n    allow: [\"1\", \"2\"]\n    workspace: " + te.ws + "\n    permission_mode: accept-edits\n")
	out, _ := te.mustRun(ExitOK, "gateway", "--check")
	for _, s := range []string{"gateway.yaml: 2 channels", "  hook: anyone allowed, no workspace (talk only), the configuration's permission mode",
		"  tg: 2 allowed, workspace " + te.ws + ", accept-edits"} {
		if !strings.Contains(out, s) {
			t.Errorf("--check lacks %q:\n%s", s, out)
		}
	}
}
