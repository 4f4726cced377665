// Package feishufake is a local fake of the Feishu / Lark Open Platform
// for the feishu channel's tests: the tenant access token, sending,
// editing (PUT for text, PATCH for cards) and the resources of messages,
// plus the event subscription's side — it posts schema 2.0
// im.message.receive_v1 and card.action.trigger events to the gateway,
// encrypted and signed when built with an encrypt key, and keeps an event
// the gateway did not answer 200 to post it again.
package feishufake

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/gatewaytest"
)

// The app's credentials the fake accepts.
const (
	AppID             = "cli_a1b2c3d4e5f60001"
	AppSecret         = "fake-app-secret-0123456789"
	VerificationToken = "fake-verification-token-0123"
	// EncryptKey is the key [WithEncryptKey] usually gets.
	EncryptKey = "fake-encrypt-key-0123456789"
	tenantKey  = "fake-tenant"
)

// Option configures a Platform.
type Option func(*Platform)

// WithEncryptKey makes the platform encrypt and sign the events it posts
// with key, as Feishu does when the app has an Encrypt Key.
func WithEncryptKey(key string) Option { return func(p *Platform) { p.encryptKey = key } }

// Platform is the fake. It implements gatewaytest.Platform.
type Platform struct {
	gatewaytest.Throttler // Throttle, Throttled

	srv        *httptest.Server
	encryptKey string
	post       *http.Client

	mu        sync.Mutex
	tokens    map[string]time.Time // issued tenant tokens and their expiry
	tokenTTL  time.Duration
	issued    int
	msgs      map[string]*message
	chats     map[string][]*message
	seq       int
	resources map[string]resource
	target    string
	pending   []*delivery
	last      *delivery
	statuses  []int
	uuids     map[string]*message // the idempotency keys of sends
	uploads   map[string]resource // uploaded images and files, by key
	lose      int                 // sends to carry out but answer 502

	// deliver serialises posting, so events arrive in order.
	deliver sync.Mutex
}

// message is a message the bot sent.
type message struct {
	id, chatID, msgType, content string
	edits                        int
	sharedCard                   bool
	sent                         time.Time
}

// resource is a file a user sent in a message, or the bot uploaded.
type resource struct {
	messageID, name, mime string
	data                  []byte
}

// delivery is an event to post: its plain JSON.
type delivery struct {
	body []byte
}

// New starts the fake on 127.0.0.1; t's cleanup stops it.
func New(t testing.TB, opts ...Option) *Platform {
	p := &Platform{
		tokens:    map[string]time.Time{},
		tokenTTL:  2 * time.Hour,
		msgs:      map[string]*message{},
		chats:     map[string][]*message{},
		resources: map[string]resource{},
		uuids:     map[string]*message{},
		uploads:   map[string]resource{},
		post:      &http.Client{Timeout: 30 * time.Second},
	}
	for _, o := range opts {
		o(p)
	}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

// URL is the Open Platform's base, for the channel's api_url.
func (p *Platform) URL() string { return p.srv.URL }

// Getenv answers the channel's default variables with the fake's
// secrets (the encrypt key only when the fake has one).
func (p *Platform) Getenv(name string) string {
	switch name {
	case "FEISHU_APP_SECRET":
		return AppSecret
	case "FEISHU_VERIFICATION_TOKEN":
		return VerificationToken
	case "FEISHU_ENCRYPT_KEY":
		return p.encryptKey
	}
	return ""
}

// Target implements gatewaytest.Platform: events go to base+"/events".
func (p *Platform) Target(base string) {
	p.mu.Lock()
	p.target = base
	p.mu.Unlock()
}

// Send implements gatewaytest.Platform: user sends a text message.
func (p *Platform) Send(t testing.TB, chatID, userID, text string) {
	t.Helper()
	content, _ := json.Marshal(map[string]string{"text": text})
	p.userMessage(t, chatID, userID, "text", string(content), nil, nil)
}

// SendRaw makes user send a message of msgType with content (the JSON
// string of the event's message.content) and mentions.
func (p *Platform) SendRaw(t testing.TB, chatID, userID, msgType, content string, mentions []Mention) {
	t.Helper()
	p.userMessage(t, chatID, userID, msgType, content, mentions, nil)
}

// Mention is an @-mention in a message: Key is its placeholder in the
// text ("@_user_1").
type Mention struct {
	Key    string `json:"key"`
	OpenID string `json:"-"`
	Name   string `json:"name"`
}

// SendImage makes user send an image; the bot fetches it from the
// message's resources.
func (p *Platform) SendImage(t testing.TB, chatID, userID, mime string, data []byte) {
	t.Helper()
	p.mu.Lock()
	p.seq++
	key := fmt.Sprintf("img_v3_%04d", p.seq)
	p.mu.Unlock()
	content, _ := json.Marshal(map[string]string{"image_key": key})
	p.userMessage(t, chatID, userID, "image", string(content), nil, &upload{key: key, res: resource{mime: mime, data: data}})
}

// upload is a file sent with a user's message.
type upload struct {
	key string
	res resource
}

func (p *Platform) userMessage(t testing.TB, chatID, userID, msgType, content string, mentions []Mention, up *upload) {
	t.Helper()
	now := time.Now()
	p.mu.Lock()
	p.seq++
	mid := fmt.Sprintf("om_user%06d", p.seq)
	if up != nil {
		up.res.messageID = mid
		p.resources[up.key] = up.res
	}
	p.mu.Unlock()
	ms := []map[string]any{}
	for _, m := range mentions {
		ms = append(ms, map[string]any{"key": m.Key, "name": m.Name, "tenant_key": tenantKey,
			"id": map[string]string{"open_id": m.OpenID, "union_id": "on_" + m.OpenID, "user_id": m.OpenID}})
	}
	ev := map[string]any{
		"sender": map[string]any{
			"sender_id":   map[string]string{"open_id": userID, "union_id": "on_" + userID, "user_id": userID},
			"sender_type": "user",
			"tenant_key":  tenantKey,
		},
		"message": map[string]any{
			"message_id":   mid,
			"root_id":      "",
			"parent_id":    "",
			"create_time":  strconv.FormatInt(now.UnixMilli(), 10),
			"update_time":  strconv.FormatInt(now.UnixMilli(), 10),
			"chat_id":      chatID,
			"chat_type":    "group",
			"message_type": msgType,
			"content":      content,
			"mentions":     ms,
		},
	}
	p.enqueue(t, "im.message.receive_v1", ev)
}

// Press implements gatewaytest.Platform: user presses the button with
// data under the bot's card msg (Feishu posts card.action.trigger).
func (p *Platform) Press(t testing.TB, msg gateway.MessageRef, userID, data string) {
	t.Helper()
	p.mu.Lock()
	m := p.msgs[msg.ID]
	var found bool
	if m != nil {
		for _, b := range p.render(m).Buttons {
			found = found || b.Data == data
		}
	}
	p.mu.Unlock()
	if !found {
		t.Fatalf("feishufake: message %s has no button with data %q", msg.ID, data)
	}
	ev := map[string]any{
		"operator": map[string]string{"tenant_key": tenantKey, "open_id": userID, "union_id": "on_" + userID, "user_id": userID},
		"token":    "c-" + randomHex(16),
		"action":   map[string]any{"value": map[string]string{"data": data}, "tag": "button"},
		"host":     "im_message",
		"context":  map[string]string{"open_message_id": m.id, "open_chat_id": m.chatID},
	}
	p.enqueue(t, "card.action.trigger", ev)
}

// enqueue wraps ev in a schema 2.0 envelope and posts it, after the
// events still pending.
func (p *Platform) enqueue(t testing.TB, eventType string, ev any) {
	t.Helper()
	body, err := json.Marshal(map[string]any{
		"schema": "2.0",
		"header": map[string]string{
			"event_id":    randomHex(16),
			"event_type":  eventType,
			"create_time": strconv.FormatInt(time.Now().UnixMilli(), 10),
			"token":       VerificationToken,
			"app_id":      AppID,
			"tenant_key":  tenantKey,
		},
		"event": ev,
	})
	if err != nil {
		t.Fatalf("feishufake: %v", err)
	}
	d := &delivery{body: body}
	p.mu.Lock()
	p.pending = append(p.pending, d)
	p.last = d
	p.mu.Unlock()
	p.flush()
}

// Redeliver implements gatewaytest.Platform: the newest event is posted
// again (same event_id), as Feishu does when it saw no 200.
func (p *Platform) Redeliver(t testing.TB) {
	t.Helper()
	p.mu.Lock()
	d := p.last
	if d != nil && !p.isPending(d) {
		p.pending = append(p.pending, d)
	}
	p.mu.Unlock()
	if d == nil {
		t.Fatal("feishufake: Redeliver before any event")
	}
	p.flush()
}

func (p *Platform) isPending(d *delivery) bool {
	for _, e := range p.pending {
		if e == d {
			return true
		}
	}
	return false
}

// flush posts the pending events in order, stopping at the first one the
// gateway does not answer 200.
func (p *Platform) flush() {
	p.deliver.Lock()
	defer p.deliver.Unlock()
	for {
		p.mu.Lock()
		if len(p.pending) == 0 || p.target == "" {
			p.mu.Unlock()
			return
		}
		d, target := p.pending[0], p.target
		p.mu.Unlock()
		status := p.postEvent(target, d.body)
		p.mu.Lock()
		p.statuses = append(p.statuses, status)
		if status != http.StatusOK {
			p.mu.Unlock()
			return
		}
		if len(p.pending) > 0 && p.pending[0] == d {
			p.pending = p.pending[1:]
		}
		p.mu.Unlock()
	}
}

// postEvent posts one event as Feishu does and returns the status (0 when
// the gateway is unreachable).
func (p *Platform) postEvent(target string, plain []byte) int {
	body, hdr := p.Seal(plain)
	req, err := http.NewRequest(http.MethodPost, target+"/events", bytes.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header = hdr
	resp, err := p.post.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// Seal returns the body and headers Feishu posts for the plain event:
// as is, or encrypted and signed when the fake has an encrypt key.
func (p *Platform) Seal(plain []byte) ([]byte, http.Header) {
	hdr := http.Header{}
	hdr.Set("Content-Type", "application/json; charset=utf-8")
	hdr.Set("User-Agent", "Go-http-client/1.1")
	if p.encryptKey == "" {
		return plain, hdr
	}
	body, _ := json.Marshal(map[string]string{"encrypt": Encrypt(plain, p.encryptKey)})
	ts, nonce := strconv.FormatInt(time.Now().Unix(), 10), randomHex(8)
	hdr.Set("X-Lark-Request-Timestamp", ts)
	hdr.Set("X-Lark-Request-Nonce", nonce)
	hdr.Set("X-Lark-Signature", Sign(ts, nonce, p.encryptKey, body))
	return body, hdr
}

// VerifyURL posts the url_verification challenge the developer console
// sends when the request URL is saved, and returns the challenge the
// gateway echoed.
func (p *Platform) VerifyURL(t testing.TB) string {
	t.Helper()
	challenge := randomHex(12)
	plain, _ := json.Marshal(map[string]string{"challenge": challenge, "token": VerificationToken, "type": "url_verification"})
	var body []byte
	if p.encryptKey == "" {
		body = plain
	} else {
		// The challenge is encrypted but not signed.
		body, _ = json.Marshal(map[string]string{"encrypt": Encrypt(plain, p.encryptKey)})
	}
	p.mu.Lock()
	target := p.target
	p.mu.Unlock()
	resp, err := p.post.Post(target+"/events", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("feishufake: url_verification: %v", err)
	}
	defer resp.Body.Close()
	var out struct {
		Challenge string `json:"challenge"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&out) != nil || out.Challenge != challenge {
		t.Fatalf("feishufake: url_verification: HTTP %d, challenge %q; want 200 and %q", resp.StatusCode, out.Challenge, challenge)
	}
	return out.Challenge
}

// Messages implements gatewaytest.Platform.
func (p *Platform) Messages(chatID string) []gatewaytest.Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []gatewaytest.Message
	for _, m := range p.chats[chatID] {
		out = append(out, p.render(m))
	}
	return out
}

// LoseAnswers makes the next n message sends happen but be answered
// HTTP 502, as when a proxy times out after Feishu did the work.
func (p *Platform) LoseAnswers(n int) {
	p.mu.Lock()
	p.lose = n
	p.mu.Unlock()
}

// Pending counts the events the gateway has not answered 200 yet.
func (p *Platform) Pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pending)
}

// Statuses are the HTTP statuses of the event posts so far (0: the
// gateway was unreachable).
func (p *Platform) Statuses() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.statuses...)
}

// ExpireTokens makes every tenant token issued so far invalid, as when
// one expires or the secret is reset.
func (p *Platform) ExpireTokens() {
	p.mu.Lock()
	p.tokens = map[string]time.Time{}
	p.mu.Unlock()
}

// TokensIssued counts the tenant tokens handed out.
func (p *Platform) TokensIssued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.issued
}

// Content returns the raw msg_type and content of the bot's message id,
// as Feishu stores it.
func (p *Platform) Content(id string) (msgType, content string, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.msgs[id]
	if m == nil {
		return "", "", false
	}
	return m.msgType, m.content, true
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
