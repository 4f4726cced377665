// Package slackfake is a local fake of Slack for the slack channel's
// tests: the Web API methods the channel calls (auth.test,
// chat.postMessage, chat.update, files.getUploadURLExternal, the upload
// URL, files.completeUploadExternal, url_private downloads) on
// 127.0.0.1, and Slack's side of the Events API and interactivity: it
// posts signed event_callback and block_actions requests to the gateway,
// and keeps those the gateway did not acknowledge (non-2xx) to post them
// again, as Slack retries. It implements gatewaytest.Platform.
package slackfake

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/gatewaytest"
)

// The workspace the fake is, and the credentials the channel needs.
const (
	// Token is the bot token the fake accepts (Authorization: Bearer or
	// the token form field).
	Token = "xoxb-1001-fake-bot-token"
	// SigningSecret is what the fake signs its requests with.
	SigningSecret = "8f742231b10e8888abcd99yyyzzz85a5"
	// BotUserID is the bot's user; BotID its bot id, on its messages.
	BotUserID = "U0000BOT"
	BotID     = "B0000BOT"
	// TeamID is the workspace; AppID the app.
	TeamID = "T0000FAKE"
	AppID  = "A0000FAKE"
)

// Platform is the fake Slack.
type Platform struct {
	gatewaytest.Throttler // Throttle, Throttled

	srv    *httptest.Server
	client *http.Client

	mu     sync.Mutex
	target string
	seq    int
	chats  map[string][]*message
	files  map[string]*file // by id: shared by users or uploaded by the bot
	calls  []Call

	// deliver serializes posts to the gateway.
	deliver sync.Mutex
	pending []*delivery // posts the gateway has not acknowledged, oldest first
	last    *delivery   // the newest update
}

// Call is one Web API call the bot made, as it arrived.
type Call struct {
	Method string
	// Params are the form fields (token removed).
	Params map[string]string
}

type message struct {
	ts      string
	text    string // as Slack shows it
	rawText string // the text parameter as sent
	blocks  []byte // the blocks parameter as sent (JSON), nil without
	buttons []gateway.Button
	files   []gateway.Attachment
	edits   int
}

type file struct {
	id, name, mime string
	data           []byte
	length         int  // announced by files.getUploadURLExternal
	uploaded       bool // the bytes arrived at the upload URL
}

type delivery struct {
	path, contentType string
	body              []byte
	attempts          int
}

// New starts the fake on 127.0.0.1; it stops when t ends.
func New(t testing.TB) *Platform {
	p := &Platform{chats: map[string][]*message{}, files: map[string]*file{}}
	p.srv = httptest.NewServer(p.routes())
	p.client = p.srv.Client()
	p.client.Timeout = 30 * time.Second
	t.Cleanup(p.srv.Close)
	return p
}

// URL is the Web API base the channel's Config.APIURL takes.
func (p *Platform) URL() string { return p.srv.URL + "/api/" }

// Getenv serves the channel's default variables: SLACK_BOT_TOKEN and
// SLACK_SIGNING_SECRET.
func (p *Platform) Getenv(name string) string {
	switch name {
	case "SLACK_BOT_TOKEN":
		return Token
	case "SLACK_SIGNING_SECRET":
		return SigningSecret
	}
	return ""
}

// Target implements gatewaytest.Platform: base is where the gateway
// serves the channel; events go to base+"/events", presses to
// base+"/interactivity".
func (p *Platform) Target(base string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = base
}

// Messages implements gatewaytest.Platform.
func (p *Platform) Messages(chatID string) []gatewaytest.Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []gatewaytest.Message
	for _, m := range p.chats[chatID] {
		out = append(out, gatewaytest.Message{ID: m.ts, Text: m.text, Edits: m.edits,
			Buttons: append([]gateway.Button(nil), m.buttons...), Files: append([]gateway.Attachment(nil), m.files...)})
	}
	return out
}

// Raw returns the text and blocks parameters of the bot's message ts in
// chat as last sent (blocks is nil when none were).
func (p *Platform) Raw(chatID, ts string) (text string, blocks []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.chats[chatID] {
		if m.ts == ts {
			return m.rawText, m.blocks
		}
	}
	return "", nil
}

// Calls returns the Web API calls the bot made so far.
func (p *Platform) Calls() []Call {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Call(nil), p.calls...)
}

// nextTS returns a new message timestamp ("1700000000.000100"), which is
// also a message's id in Slack.
func (p *Platform) nextTS() string {
	p.seq++
	return tsOf(p.seq)
}
