package slackfake

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/slack-go/slack"

	"github.com/reinhq/rein/gateway"
)

// maxAPIBody caps a Web API request; uploads may be larger.
const (
	maxAPIBody    = 1 << 20
	maxUploadBody = 64 << 20
)

func (p *Platform) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/auth.test", p.api(false, p.authTest))
	mux.HandleFunc("POST /api/chat.postMessage", p.api(true, p.postMessage))
	mux.HandleFunc("POST /api/chat.update", p.api(true, p.update))
	mux.HandleFunc("POST /api/files.getUploadURLExternal", p.api(false, p.getUploadURL))
	mux.HandleFunc("POST /api/files.completeUploadExternal", p.api(true, p.completeUpload))
	mux.HandleFunc("POST /api/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"ok": false, "error": "unknown_method"})
	})
	mux.HandleFunc("POST /upload/v1/{id}", p.upload)
	mux.HandleFunc("GET /files-pri/{owner}/{name}", p.download)
	return mux
}

// apiFunc answers one Web API method; params are its form fields.
type apiFunc func(params url.Values) map[string]any

// api wraps a method: the body read as Slack reads it (form or JSON), the
// token checked, and, for throttled methods, the 429 the test asked for.
func (p *Platform) api(throttled bool, f apiFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		params, err := readParams(w, r)
		if err != nil {
			writeJSON(w, map[string]any{"ok": false, "error": "invalid_form_data"})
			return
		}
		token := params.Get("token")
		if bearer, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); found {
			token = bearer
		}
		if token == "" {
			writeJSON(w, map[string]any{"ok": false, "error": "not_authed"})
			return
		}
		if subtle.ConstantTimeCompare([]byte(token), []byte(Token)) != 1 {
			writeJSON(w, map[string]any{"ok": false, "error": "invalid_auth"})
			return
		}
		params.Del("token")
		method := strings.TrimPrefix(r.URL.Path, "/api/")
		p.mu.Lock()
		call := Call{Method: method, Params: map[string]string{}}
		for k := range params {
			call.Params[k] = params.Get(k)
		}
		p.calls = append(p.calls, call)
		if after, ok := p.throttle(throttled); ok {
			secs := max(1, int(math.Ceil(after.Seconds())))
			p.mu.Unlock()
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"ok":false,"error":"ratelimited"}`)
			return
		}
		p.mu.Unlock()
		writeJSON(w, f(params))
	}
}

// throttle spends one of Throttle's refusals when the method can be
// throttled (sends and edits).
func (p *Platform) throttle(throttled bool) (time.Duration, bool) {
	if !throttled {
		return 0, false
	}
	return p.Take()
}

func readParams(w http.ResponseWriter, r *http.Request) (url.Values, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAPIBody))
	if err != nil {
		return nil, err
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, err
		}
		v := url.Values{}
		for k, x := range m {
			if s, isString := x.(string); isString {
				v.Set(k, s)
			} else {
				b, _ := json.Marshal(x)
				v.Set(k, string(b))
			}
		}
		return v, nil
	}
	return url.ParseQuery(string(body))
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}

func slackErr(code string) map[string]any { return map[string]any{"ok": false, "error": code} }

func (p *Platform) authTest(url.Values) map[string]any {
	return map[string]any{"ok": true, "url": "https://fake.slack.com/", "team": "Fake", "user": "rein",
		"team_id": TeamID, "user_id": BotUserID, "bot_id": BotID, "is_enterprise_install": false}
}

func (p *Platform) postMessage(v url.Values) map[string]any {
	ch := v.Get("channel")
	if ch == "" {
		return slackErr("channel_not_found")
	}
	m, code := render(v)
	if code != "" {
		return slackErr(code)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	m.ts = p.nextTS()
	p.chats[ch] = append(p.chats[ch], m)
	return map[string]any{"ok": true, "channel": ch, "ts": m.ts, "message": wireMessage(m)}
}

func (p *Platform) update(v url.Values) map[string]any {
	ch, ts := v.Get("channel"), v.Get("ts")
	if ch == "" {
		return slackErr("channel_not_found")
	}
	n, code := render(v)
	if code != "" {
		return slackErr(code)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.chats[ch] {
		if m.ts != ts {
			continue
		}
		if _, has := v["blocks"]; !has {
			// chat.update keeps the blocks when none are sent.
			n.blocks, n.buttons = m.blocks, m.buttons
			if sections := sectionText(m.blocks); sections != "" {
				n.text = sections
			}
		}
		m.text, m.rawText, m.blocks, m.buttons = n.text, n.rawText, n.blocks, n.buttons
		m.edits++
		return map[string]any{"ok": true, "channel": ch, "ts": ts, "text": m.rawText, "message": wireMessage(m)}
	}
	return slackErr("message_not_found")
}

// render reads a message's text and blocks as Slack would, checking
// Block Kit's limits; code is Slack's error for what it refuses.
func render(v url.Values) (m *message, code string) {
	m = &message{rawText: v.Get("text")}
	if utf16Len(m.rawText) > 40000 {
		return nil, "msg_too_long"
	}
	m.text = unescape(m.rawText)
	raw := v.Get("blocks")
	if raw != "" {
		var blocks slack.Blocks
		if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
			return nil, "invalid_blocks_format"
		}
		if len(blocks.BlockSet) > 50 {
			return nil, "invalid_blocks"
		}
		ids := map[string]bool{}
		for _, b := range blocks.BlockSet {
			switch b := b.(type) {
			case *slack.SectionBlock:
				if b.Text == nil || (b.Text.Type != slack.PlainTextType && b.Text.Type != slack.MarkdownType) || utf16Len(b.Text.Text) > 3000 || b.Text.Text == "" {
					return nil, "invalid_blocks"
				}
			case *slack.ActionBlock:
				if b.Elements == nil || len(b.Elements.ElementSet) == 0 || len(b.Elements.ElementSet) > 25 {
					return nil, "invalid_blocks"
				}
				for _, e := range b.Elements.ElementSet {
					btn, isButton := e.(*slack.ButtonBlockElement)
					if !isButton {
						continue
					}
					if btn.Text == nil || btn.Text.Type != slack.PlainTextType || btn.Text.Text == "" || utf16Len(btn.Text.Text) > 75 ||
						len(btn.Value) > 2000 || btn.ActionID == "" || len(btn.ActionID) > 255 || ids[btn.ActionID] {
						return nil, "invalid_blocks"
					}
					ids[btn.ActionID] = true
					m.buttons = append(m.buttons, gateway.Button{Label: btn.Text.Text, Data: btn.Value})
				}
			}
		}
		m.blocks = []byte(raw)
		if s := sectionText([]byte(raw)); s != "" {
			m.text = s
		}
	}
	if m.rawText == "" && len(m.blocks) == 0 {
		return nil, "no_text"
	}
	return m, ""
}

// sectionText is the text of a message's section blocks, as Slack shows
// a message with blocks instead of its text.
func sectionText(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	var blocks slack.Blocks
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var b strings.Builder
	for _, x := range blocks.BlockSet {
		if s, isSection := x.(*slack.SectionBlock); isSection && s.Text != nil {
			b.WriteString(s.Text.Text)
		}
	}
	return b.String()
}

// wireMessage is a message as the Web API returns it.
func wireMessage(m *message) map[string]any {
	w := map[string]any{"type": "message", "user": BotUserID, "bot_id": BotID, "ts": m.ts, "text": m.rawText, "team": TeamID}
	if len(m.blocks) > 0 {
		w["blocks"] = json.RawMessage(m.blocks)
	}
	return w
}

// unescape undoes the three escapes Slack's text takes (&amp; &lt; &gt;).
func unescape(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

func (p *Platform) getUploadURL(v url.Values) map[string]any {
	name := v.Get("filename")
	length, err := strconv.Atoi(v.Get("length"))
	if name == "" || err != nil || length <= 0 {
		return slackErr("invalid_arguments")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	id := fmt.Sprintf("F%08d", p.seq)
	p.files[id] = &file{id: id, name: name, length: length}
	return map[string]any{"ok": true, "upload_url": p.srv.URL + "/upload/v1/" + id, "file_id": id}
}

// upload takes a file's bytes: a multipart form's file part, or the raw
// body, as Slack's upload URL does.
func (p *Platform) upload(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var data []byte
	var err error
	r.Body = http.MaxBytesReader(w, r.Body, maxUploadBody)
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "multipart/form-data" {
		var f multipart.File
		f, _, err = r.FormFile("file")
		if err == nil {
			data, err = io.ReadAll(f)
			f.Close()
		}
	} else {
		data, err = io.ReadAll(r.Body)
	}
	if err != nil {
		http.Error(w, "bad upload", http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.files[id]
	if f == nil || f.uploaded {
		http.Error(w, "unknown upload", http.StatusNotFound)
		return
	}
	f.data, f.uploaded = data, true
	f.mime = http.DetectContentType(data)
	fmt.Fprintf(w, "OK - %d", len(data))
}

func (p *Platform) completeUpload(v url.Values) map[string]any {
	var sums []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(v.Get("files")), &sums); err != nil || len(sums) == 0 {
		return slackErr("invalid_arguments")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	m := &message{rawText: v.Get("initial_comment")}
	m.text = unescape(m.rawText)
	var out []map[string]any
	for _, s := range sums {
		f := p.files[s.ID]
		if f == nil {
			return slackErr("file_not_found")
		}
		if !f.uploaded || len(f.data) != f.length {
			return slackErr("file_upload_size_mismatch")
		}
		title := s.Title
		if title == "" {
			title = f.name
		}
		m.files = append(m.files, gateway.Attachment{Name: f.name, MIME: f.mime, Data: f.data})
		out = append(out, map[string]any{"id": f.id, "title": title})
	}
	if ch := v.Get("channel_id"); ch != "" {
		m.ts = p.nextTS()
		p.chats[ch] = append(p.chats[ch], m)
	}
	return map[string]any{"ok": true, "files": out}
}

// download serves a file a user shared, to the bot's token only.
func (p *Platform) download(w http.ResponseWriter, r *http.Request) {
	if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+Token)) != 1 {
		// Slack redirects to the sign-in page; a plain refusal will do.
		http.Error(w, "not authorized", http.StatusForbidden)
		return
	}
	// Slack's links are /files-pri/<team>-<file id>/<name>.
	_, id, _ := strings.Cut(r.PathValue("owner"), "-")
	p.mu.Lock()
	f := p.files[id]
	p.mu.Unlock()
	if f == nil || !f.uploaded {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", f.mime)
	w.Write(f.data)
}

// tsOf is the n-th message timestamp.
func tsOf(n int) string {
	return fmt.Sprintf("%d.%06d", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix()+int64(n), n)
}
