package slackfake

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/gateway"
)

// Sign returns Slack's X-Slack-Signature of body at timestamp ts (Unix
// seconds): "v0=" + hex(HMAC-SHA256(secret, "v0:" + ts + ":" + body)).
func Sign(secret, ts string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%s:", ts)
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// Send implements gatewaytest.Platform: user writes text in chat, and
// Slack posts the message event (and, when text mentions the bot in a
// channel, an app_mention event too, as Slack does for an app subscribed
// to both).
func (p *Platform) Send(t testing.TB, chatID, userID, text string) {
	t.Helper()
	p.sendMessage(t, chatID, userID, text, nil)
}

// SendFile makes user share f in chat with text: a message event of
// subtype file_share whose files[] name url_private links on the fake.
func (p *Platform) SendFile(t testing.TB, chatID, userID, text string, f gateway.Attachment) {
	t.Helper()
	p.mu.Lock()
	p.seq++
	id := fmt.Sprintf("F%08d", p.seq)
	p.files[id] = &file{id: id, name: f.Name, mime: f.MIME, data: f.Data, length: len(f.Data), uploaded: true}
	p.mu.Unlock()
	link := fmt.Sprintf("%s/files-pri/%s-%s/%s", p.srv.URL, TeamID, id, url.PathEscape(f.Name))
	p.sendMessage(t, chatID, userID, text, []map[string]any{{
		"id": id, "created": time.Now().Unix(), "timestamp": time.Now().Unix(), "name": f.Name, "title": f.Name,
		"mimetype": f.MIME, "filetype": "auto", "user": userID, "mode": "hosted", "size": len(f.Data),
		"url_private": link, "url_private_download": link + "?download=1", /* as Slack names it */
		"is_external": false, "editable": false,
	}})
}

func (p *Platform) sendMessage(t testing.TB, chatID, userID, text string, files []map[string]any) {
	t.Helper()
	p.mu.Lock()
	ts := p.nextTS()
	channelType := "channel"
	if strings.HasPrefix(chatID, "D") {
		channelType = "im"
	}
	ev := map[string]any{"type": "message", "channel": chatID, "user": userID, "text": text, "ts": ts,
		"event_ts": ts, "channel_type": channelType, "team": TeamID, "client_msg_id": fmt.Sprintf("c0ffee00-0000-4000-8000-%012d", p.seq)}
	if files != nil {
		ev["subtype"] = "file_share"
		ev["files"] = files
		ev["upload"] = false
	}
	bodies := [][]byte{p.callback(ev)}
	if channelType != "im" && strings.Contains(text, "<@"+BotUserID+">") {
		mention := map[string]any{"type": "app_mention", "channel": chatID, "user": userID, "text": text, "ts": ts,
			"event_ts": ts, "team": TeamID}
		if files != nil {
			mention["files"] = files
		}
		bodies = append(bodies, p.callback(mention))
	}
	p.mu.Unlock()
	for _, b := range bodies {
		p.post(t, &delivery{path: "/events", contentType: "application/json", body: b})
	}
}

// callback wraps an inner event in the Events API's envelope. p.mu is
// held.
func (p *Platform) callback(inner map[string]any) []byte {
	p.seq++
	b, _ := json.Marshal(map[string]any{
		"token": "Jhj5dZrVaK7ZwHHjRyZWjbDl", "team_id": TeamID, "api_app_id": AppID, "event": inner,
		"type": "event_callback", "event_id": fmt.Sprintf("Ev%08dFAKE", p.seq), "event_time": time.Now().Unix(),
		"authorizations":        []map[string]any{{"enterprise_id": nil, "team_id": TeamID, "user_id": BotUserID, "is_bot": true, "is_enterprise_install": false}},
		"is_ext_shared_channel": false, "event_context": fmt.Sprintf("4-fake-%d", p.seq),
	})
	return b
}

// Press implements gatewaytest.Platform: user presses the button whose
// value is data under the bot's message msg, and Slack posts the
// block_actions payload (form field payload) to /interactivity. There
// must be such a button.
func (p *Platform) Press(t testing.TB, msg gateway.MessageRef, userID, data string) {
	t.Helper()
	p.mu.Lock()
	var m *message
	for _, x := range p.chats[msg.ChatID] {
		if x.ts == msg.ID {
			m = x
		}
	}
	if m == nil {
		p.mu.Unlock()
		t.Fatalf("slackfake: no message %s in %s to press a button under", msg.ID, msg.ChatID)
	}
	var blocks []map[string]any
	_ = json.Unmarshal(m.blocks, &blocks)
	var action map[string]any
	for _, b := range blocks {
		if b["type"] != "actions" {
			continue
		}
		elems, _ := b["elements"].([]any)
		for _, e := range elems {
			el, _ := e.(map[string]any)
			if el["type"] == "button" && el["value"] == data {
				action = map[string]any{"action_id": el["action_id"], "block_id": b["block_id"], "text": el["text"],
					"value": data, "type": "button", "action_ts": fmt.Sprintf("%d.%06d", time.Now().Unix(), p.seq)}
			}
		}
	}
	if action == nil {
		p.mu.Unlock()
		t.Fatalf("slackfake: message %s in %s has no button with value %q (buttons %+v)", msg.ID, msg.ChatID, data, m.buttons)
	}
	p.seq++
	payload, _ := json.Marshal(map[string]any{
		"type":       "block_actions",
		"user":       map[string]any{"id": userID, "username": "user" + userID, "name": "user" + userID, "team_id": TeamID},
		"api_app_id": AppID, "token": "Jhj5dZrVaK7ZwHHjRyZWjbDl",
		"container":  map[string]any{"type": "message", "message_ts": m.ts, "channel_id": msg.ChatID, "is_ephemeral": false},
		"trigger_id": fmt.Sprintf("%d.%d.fake%08d", time.Now().Unix(), 1001, p.seq),
		"team":       map[string]any{"id": TeamID, "domain": "fake"}, "enterprise": nil, "is_enterprise_install": false,
		"channel":      map[string]any{"id": msg.ChatID, "name": "chat-" + msg.ChatID},
		"message":      map[string]any{"type": "message", "user": BotUserID, "bot_id": BotID, "ts": m.ts, "text": m.rawText, "team": TeamID, "blocks": json.RawMessage(m.blocks)},
		"state":        map[string]any{"values": map[string]any{}},
		"response_url": fmt.Sprintf("%s/actions/%s/%d/fake", p.srv.URL, TeamID, p.seq),
		"actions":      []any{action},
	})
	p.mu.Unlock()
	body := []byte(url.Values{"payload": {string(payload)}}.Encode())
	p.post(t, &delivery{path: "/interactivity", contentType: "application/x-www-form-urlencoded", body: body})
}

// Redeliver implements gatewaytest.Platform: the newest update is posted
// again, marked as a retry (X-Slack-Retry-Num).
func (p *Platform) Redeliver(t testing.TB) {
	t.Helper()
	p.deliver.Lock()
	d := p.last
	p.deliver.Unlock()
	if d == nil {
		t.Fatal("slackfake: nothing to redeliver")
	}
	p.post(t, d)
}

// post delivers the updates still pending, then d; those the gateway
// does not acknowledge stay pending for the next post.
func (p *Platform) post(t testing.TB, d *delivery) {
	t.Helper()
	p.mu.Lock()
	target := p.target
	p.mu.Unlock()
	if target == "" {
		t.Fatal("slackfake: Target was not called: the fake does not know where the gateway listens")
	}
	p.deliver.Lock()
	defer p.deliver.Unlock()
	list := p.pending
	if !contains(list, d) {
		list = append(list, d)
	}
	var still []*delivery
	for _, q := range list {
		if !p.try(target, q) {
			still = append(still, q)
		}
	}
	p.pending = still
	p.last = d
}

func contains(ds []*delivery, d *delivery) bool {
	for _, x := range ds {
		if x == d {
			return true
		}
	}
	return false
}

// try posts d once, signed now, as Slack does each attempt; true when the
// gateway answered 2xx.
func (p *Platform) try(target string, d *delivery) bool {
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req, err := http.NewRequest(http.MethodPost, target+d.path, bytes.NewReader(d.body))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", d.contentType)
	req.Header.Set("User-Agent", "Slackbot 1.0 (+https://api.slack.com/robots)")
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", Sign(SigningSecret, ts, d.body))
	if d.attempts > 0 {
		req.Header.Set("X-Slack-Retry-Num", strconv.Itoa(d.attempts))
		req.Header.Set("X-Slack-Retry-Reason", "http_error")
	}
	d.attempts++
	resp, err := p.client.Do(req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return resp.StatusCode/100 == 2
}
