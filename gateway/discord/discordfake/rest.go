package discordfake

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reinhq/rein/gateway"
)

// Discord's limits the fake enforces.
const (
	maxJSONBody   = 1 << 20
	maxUploadBody = 25 << 20
	maxContent    = 2000
	maxCustomID   = 100
	maxLabel      = 80
)

func (p *Platform) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/{v}/gateway", p.getGateway)
	mux.HandleFunc("GET /api/{v}/gateway/bot", p.auth(p.getGateway))
	mux.HandleFunc("GET /api/{v}/users/@me", p.auth(p.getMe))
	mux.HandleFunc("POST /api/{v}/channels/{chat}/messages", p.auth(p.createMessage))
	mux.HandleFunc("GET /api/{v}/channels/{chat}/messages", p.auth(p.listMessages))
	mux.HandleFunc("PATCH /api/{v}/channels/{chat}/messages/{id}", p.auth(p.editMessage))
	mux.HandleFunc("POST /api/{v}/interactions/{id}/{token}/callback", p.callback)
	mux.HandleFunc("GET /attachments/{chat}/{aid}/{name}", p.cdn)
	mux.HandleFunc("GET /gateway-ws", p.serveGateway)
	mux.HandleFunc("GET /gateway-ws/{$}", p.serveGateway) // discordgo adds a slash
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, apiError{Message: "404: Not Found", Code: 0})
	})
	return mux
}

// auth checks "Authorization: Bot <token>", as Discord does.
func (p *Platform) auth(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bot "+Token {
			writeJSON(w, http.StatusUnauthorized, apiError{Message: "401: Unauthorized", Code: 0})
			return
		}
		next(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (p *Platform) getGateway(w http.ResponseWriter, r *http.Request) {
	body := map[string]any{"url": "ws://" + r.Host + "/gateway-ws"}
	if strings.HasSuffix(r.URL.Path, "/bot") {
		body["shards"] = 1
		body["session_start_limit"] = map[string]int{"total": 1000, "remaining": 999, "reset_after": 14400000, "max_concurrency": 1}
	}
	writeJSON(w, http.StatusOK, body)
}

func (p *Platform) getMe(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, user{ID: BotID, Username: "rein", Discriminator: "0", Bot: true})
}

// refuse answers a throttled or failing call (Throttle, Fail); p.mu is
// held. It reports whether it answered.
func (p *Platform) refuse(w http.ResponseWriter) bool {
	if after, ok := p.Take(); ok {
		secs := after.Seconds()
		h := w.Header()
		h.Set("Retry-After", strconv.Itoa(int(math.Ceil(secs))))
		h.Set("X-RateLimit-Limit", "5")
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Reset", strconv.FormatFloat(float64(time.Now().Add(after).UnixMilli())/1000, 'f', 3, 64))
		h.Set("X-RateLimit-Reset-After", strconv.FormatFloat(secs, 'f', 3, 64))
		h.Set("X-RateLimit-Bucket", "fakebucket")
		h.Set("X-RateLimit-Scope", "user")
		writeJSON(w, http.StatusTooManyRequests, rateLimited{Message: "You are being rate limited.", RetryAfter: secs, Global: false})
		return true
	}
	if p.failN > 0 {
		p.failN--
		writeJSON(w, p.failStatus, apiError{Message: http.StatusText(p.failStatus), Code: 0})
		return true
	}
	return false
}

// messageBody is what a bot posts or patches (JSON, or multipart with
// payload_json and files[n]).
type messageBody struct {
	Content    *string      `json:"content"`
	Components *[]Component `json:"components"`
	Flags      int          `json:"flags"`
}

// readBody parses a message create or edit.
func readBody(r *http.Request) (messageBody, []gateway.Attachment, error) {
	var b messageBody
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/json":
		data, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxJSONBody))
		if err != nil {
			return b, nil, err
		}
		return b, nil, json.Unmarshal(data, &b)
	case "multipart/form-data":
		mr := multipart.NewReader(http.MaxBytesReader(nil, r.Body, maxUploadBody), params["boundary"])
		var files []gateway.Attachment
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				return b, files, nil
			}
			if err != nil {
				return b, nil, err
			}
			data, err := io.ReadAll(part)
			if err != nil {
				return b, nil, err
			}
			switch name := part.FormName(); {
			case name == "payload_json":
				if err := json.Unmarshal(data, &b); err != nil {
					return b, nil, err
				}
			case strings.HasPrefix(name, "files["):
				files = append(files, gateway.Attachment{Name: part.FileName(), MIME: part.Header.Get("Content-Type"), Data: data})
			}
		}
	}
	return b, nil, fmt.Errorf("content type %q", mt)
}

// invalid answers Discord's 50035 Invalid Form Body.
func invalid(w http.ResponseWriter, why string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Invalid Form Body", "code": 50035, "errors": map[string]any{"_errors": []map[string]string{{"code": "BASE_TYPE_INVALID", "message": why}}}})
}

// check validates content and components as Discord does.
func check(b messageBody) string {
	if b.Content != nil && utf8.RuneCountInString(*b.Content) > maxContent {
		return "content: Must be 2000 or fewer in length."
	}
	if b.Components != nil {
		if len(*b.Components) > 5 {
			return "components: Must be 5 or fewer in length."
		}
		for _, row := range *b.Components {
			if row.Type != 1 || len(row.Components) == 0 || len(row.Components) > 5 {
				return "components: an action row holds 1 to 5 components."
			}
			for _, c := range row.Components {
				if c.Type != 2 || c.CustomID == "" || len(c.CustomID) > maxCustomID || c.Style < 1 || c.Style > 4 || utf8.RuneCountInString(c.Label) > maxLabel {
					return "components: a button needs a style 1-4, a label of at most 80 and a custom_id of 1 to 100."
				}
			}
		}
	}
	return ""
}

func (p *Platform) createMessage(w http.ResponseWriter, r *http.Request) {
	b, files, err := readBody(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{Message: "400: Bad Request", Code: 0})
		return
	}
	if why := check(b); why != "" {
		invalid(w, why)
		return
	}
	if (b.Content == nil || *b.Content == "") && len(files) == 0 && (b.Components == nil || len(*b.Components) == 0) {
		writeJSON(w, http.StatusBadRequest, apiError{Message: "Cannot send an empty message", Code: 50006})
		return
	}
	chat := r.PathValue("chat")
	p.mu.Lock()
	if p.refuse(w) {
		p.mu.Unlock()
		return
	}
	m := &message{
		ID:        p.id(),
		ChannelID: chat,
		GuildID:   GuildID,
		Author:    user{ID: BotID, Username: "rein", Discriminator: "0", Bot: true},
		Timestamp: time.Now().UTC().Format(time.RFC3339Nano),
		Flags:     b.Flags,
	}
	if b.Content != nil {
		m.Content = *b.Content
	}
	if b.Components != nil {
		m.Components = *b.Components
	}
	for _, f := range files {
		aid := p.id()
		path := "/attachments/" + chat + "/" + aid + "/" + f.Name
		p.blobs[path] = f.Data
		m.Attachments = append(m.Attachments, attachment{ID: aid, Filename: f.Name, ContentType: f.MIME, Size: len(f.Data), URL: "http://" + r.Host + path, ProxyURL: "http://" + r.Host + path})
	}
	norm(m)
	p.files[m.ID] = files
	p.chats[chat] = append(p.chats[chat], m)
	out := *m
	p.mu.Unlock()
	// Discord dispatches the bot's own messages too; bots ignore them.
	p.dispatch(event{t: "MESSAGE_CREATE", d: out})
	writeJSON(w, http.StatusOK, out)
}

func (p *Platform) editMessage(w http.ResponseWriter, r *http.Request) {
	b, _, err := readBody(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{Message: "400: Bad Request", Code: 0})
		return
	}
	if why := check(b); why != "" {
		invalid(w, why)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refuse(w) {
		return
	}
	m := p.find(r.PathValue("chat"), r.PathValue("id"))
	if m == nil {
		writeJSON(w, http.StatusNotFound, apiError{Message: "Unknown Message", Code: 10008})
		return
	}
	if m.Author.ID != BotID {
		writeJSON(w, http.StatusForbidden, apiError{Message: "Cannot edit a message authored by another user", Code: 50005})
		return
	}
	if b.Content != nil {
		m.Content = *b.Content
	}
	if b.Components != nil {
		m.Components = *b.Components
		norm(m)
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	m.EditedTimestamp = &now
	p.edits[m.ID]++
	writeJSON(w, http.StatusOK, *m)
}

// listMessages serves GET /channels/{id}/messages: newest first, those
// after the id in "after" (or before "before"), at most limit (1-100,
// default 50).
func (p *Platform) listMessages(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 50
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			invalid(w, "limit: Must be between 1 and 100.")
			return
		}
		limit = n
	}
	after, _ := strconv.ParseUint(q.Get("after"), 10, 64)
	before, _ := strconv.ParseUint(q.Get("before"), 10, 64)
	p.mu.Lock()
	var out []message
	for _, m := range p.chats[r.PathValue("chat")] {
		id, _ := strconv.ParseUint(m.ID, 10, 64)
		if id > after && (before == 0 || id < before) {
			out = append(out, *m)
		}
	}
	p.mu.Unlock()
	// With after, Discord gives the oldest ones after it.
	if after > 0 && len(out) > limit {
		out = out[:limit]
	}
	sort.Slice(out, func(i, j int) bool {
		return len(out[i].ID) > len(out[j].ID) || (len(out[i].ID) == len(out[j].ID) && out[i].ID > out[j].ID)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	if out == nil {
		out = []message{}
	}
	writeJSON(w, http.StatusOK, out)
}

// callback serves an interaction's answer. Discord checks the
// interaction's token, not the bot's, and takes one answer.
func (p *Platform) callback(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxJSONBody))
	var b struct {
		Type int `json:"type"`
		Data *struct {
			Content    *string      `json:"content"`
			Components *[]Component `json:"components"`
		} `json:"data"`
	}
	if err != nil || json.Unmarshal(data, &b) != nil {
		writeJSON(w, http.StatusBadRequest, apiError{Message: "400: Bad Request", Code: 0})
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	in := p.interactions[r.PathValue("id")]
	if in == nil || in.token != r.PathValue("token") {
		writeJSON(w, http.StatusNotFound, apiError{Message: "Unknown interaction", Code: 10062})
		return
	}
	if in.answered != 0 {
		writeJSON(w, http.StatusBadRequest, apiError{Message: "Interaction has already been acknowledged.", Code: 40060})
		return
	}
	if b.Type != 6 && b.Type != 7 && b.Type != 4 && b.Type != 5 {
		invalid(w, "type: not a component interaction's response type")
		return
	}
	in.answered = b.Type
	p.callbacks++
	if m := p.find(in.chat, in.message); b.Type == 7 && b.Data != nil && m != nil {
		// UPDATE_MESSAGE edits the message carrying the button.
		if b.Data.Content != nil {
			m.Content = *b.Data.Content
		}
		if b.Data.Components != nil {
			m.Components = *b.Data.Components
			norm(m)
		}
		p.edits[m.ID]++
	}
	w.WriteHeader(http.StatusNoContent)
}

// cdn serves attachments, without authorization, as Discord's CDN does.
func (p *Platform) cdn(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	data, ok := p.blobs[r.URL.Path]
	p.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	_, _ = w.Write(data)
}
