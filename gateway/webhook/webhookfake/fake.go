// Package webhookfake is a local counterpart of the gateway's webhook
// channel: the system on the other side, which posts users' messages and
// receives the replies at its callback URL. It implements
// gatewaytest.Platform.
package webhookfake

import (
	"bytes"
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
	"github.com/reinhq/rein/gateway/webhook"
)

// Secret is the fake's shared secret.
const Secret = "webhookfake-shared-secret-0123456789"

// Platform is the fake system.
type Platform struct {
	gatewaytest.Throttler // Throttle, Throttled

	srv    *httptest.Server
	client *http.Client

	mu       sync.Mutex
	target   string
	msgs     map[string][]*gatewaytest.Message // by chat
	byID     map[string]*gatewaytest.Message
	byKey    map[string]*gatewaytest.Message // the sends' keys: a repeat is not posted again
	next     int
	updates  int
	last     []byte // the newest update's body and path
	lastPath string
	queue    [][2]string // posts that failed: path, body
	badSigs  int
}

// New starts the fake's callback server on 127.0.0.1.
func New(t testing.TB) *Platform {
	p := &Platform{msgs: map[string][]*gatewaytest.Message{}, byID: map[string]*gatewaytest.Message{},
		byKey: map[string]*gatewaytest.Message{}, client: &http.Client{Timeout: 30 * time.Second}}
	p.srv = httptest.NewServer(http.HandlerFunc(p.callback))
	t.Cleanup(p.srv.Close)
	return p
}

// URL is the callback URL (Config.CallbackURL).
func (p *Platform) URL() string { return p.srv.URL + "/callback" }

// BadSignatures counts callbacks refused for their signature.
func (p *Platform) BadSignatures() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.badSigs
}

// callback receives the gateway's replies.
func (p *Platform) callback(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := webhook.Verify([]byte(Secret), time.Now(), r.Header.Get("X-Rein-Timestamp"), r.Header.Get("X-Rein-Signature"), body); err != nil {
		p.mu.Lock()
		p.badSigs++
		p.mu.Unlock()
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if after, ok := p.Take(); ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(after.Seconds())))
		http.Error(w, `{"error":"slow down"}`, http.StatusTooManyRequests)
		return
	}
	var out webhook.Outbound
	if err := json.Unmarshal(body, &out); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch out.Type {
	case "send":
		if m := p.byKey[out.Key]; out.Key != "" && m != nil {
			fmt.Fprintf(w, `{"message_id":%q}`, m.ID) // a repeat: as the receiver docs/gateway.md describes
			return
		}
		p.next++
		m := &gatewaytest.Message{ID: strconv.Itoa(p.next), Text: out.Text, Buttons: out.Buttons}
		for _, f := range out.Files {
			m.Files = append(m.Files, gateway.Attachment(f))
		}
		p.msgs[out.ChatID] = append(p.msgs[out.ChatID], m)
		p.byID[m.ID] = m
		if out.Key != "" {
			p.byKey[out.Key] = m
		}
		fmt.Fprintf(w, `{"message_id":%q}`, m.ID)
	case "edit":
		m := p.byID[out.MessageID]
		if m == nil {
			http.Error(w, `{"error":"no such message"}`, http.StatusNotFound)
			return
		}
		m.Text, m.Buttons = out.Text, out.Buttons
		m.Edits++
		io.WriteString(w, `{}`)
	default:
		http.Error(w, "type?", http.StatusBadRequest)
	}
}

// Target implements gatewaytest.Platform.
func (p *Platform) Target(base string) {
	p.mu.Lock()
	p.target = base
	p.mu.Unlock()
}

// post signs and posts body to the gateway; a failure is queued.
func (p *Platform) post(t testing.TB, path string, body []byte) {
	p.mu.Lock()
	queue := append(p.queue, [2]string{path, string(body)})
	p.queue = nil
	target := p.target
	p.mu.Unlock()
	for i, q := range queue {
		if !p.try(target+q[0], []byte(q[1])) {
			p.mu.Lock()
			p.queue = append(queue[i:], p.queue...)
			p.mu.Unlock()
			t.Logf("webhookfake: the gateway did not take %s; kept for later", q[0])
			return
		}
	}
}

func (p *Platform) try(url string, body []byte) bool {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	ts, sig := webhook.Sign([]byte(Secret), time.Now(), body)
	req.Header.Set("X-Rein-Timestamp", ts)
	req.Header.Set("X-Rein-Signature", sig)
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode/100 == 2
}

// Send implements gatewaytest.Platform.
func (p *Platform) Send(t testing.TB, chatID, userID, text string) {
	p.mu.Lock()
	p.updates++
	id := "u" + strconv.Itoa(p.updates)
	p.mu.Unlock()
	body, _ := json.Marshal(webhook.Message{ID: id, ChatID: chatID, UserID: userID, UserName: "user" + userID, Text: text})
	p.remember("/messages", body)
	p.post(t, "/messages", body)
}

// Press implements gatewaytest.Platform.
func (p *Platform) Press(t testing.TB, msg gateway.MessageRef, userID, data string) {
	p.mu.Lock()
	p.updates++
	id := "a" + strconv.Itoa(p.updates)
	p.mu.Unlock()
	body, _ := json.Marshal(webhook.ActionJSON{ID: id, ChatID: msg.ChatID, UserID: userID, UserName: "user" + userID, MessageID: msg.ID, Data: data})
	p.remember("/actions", body)
	p.post(t, "/actions", body)
}

func (p *Platform) remember(path string, body []byte) {
	p.mu.Lock()
	p.last, p.lastPath = body, path
	p.mu.Unlock()
}

// Redeliver implements gatewaytest.Platform.
func (p *Platform) Redeliver(t testing.TB) {
	p.mu.Lock()
	path, body := p.lastPath, p.last
	p.mu.Unlock()
	p.post(t, path, body)
}

// Messages implements gatewaytest.Platform.
func (p *Platform) Messages(chatID string) []gatewaytest.Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]gatewaytest.Message, len(p.msgs[chatID]))
	for i, m := range p.msgs[chatID] {
		out[i] = *m
	}
	return out
}

// SendFile makes user send text with a file.
func (p *Platform) SendFile(t testing.TB, chatID, userID, text string, f webhook.FileJSON) {
	p.mu.Lock()
	p.updates++
	id := "u" + strconv.Itoa(p.updates)
	p.mu.Unlock()
	body, _ := json.Marshal(webhook.Message{ID: id, ChatID: chatID, UserID: userID, Text: text, Attachments: []webhook.FileJSON{f}})
	p.remember("/messages", body)
	p.post(t, "/messages", body)
}
