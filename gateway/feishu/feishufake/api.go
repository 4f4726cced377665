package feishufake

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/gatewaytest"
)

// The Open Platform's limits, as the fake enforces them.
const (
	maxTextBody = 150 << 10 // bytes of a text message's request
	maxCardBody = 30 << 10  // bytes of a card message's request
	maxTextEdit = 20        // edits of one text message
	maxImage    = 10 << 20  // bytes of an uploaded image
	maxFile     = 30 << 20  // bytes of an uploaded file
	uuidTTL     = time.Hour // how long a send's uuid deduplicates
)

// apiError is an answer with a code other than 0.
type apiError struct {
	status int
	code   int
	msg    string
	reset  int // x-ogw-ratelimit-reset, seconds
}

func invalid(msg string) *apiError {
	return &apiError{status: http.StatusBadRequest, code: 230001, msg: "Your request contains an invalid request parameter, " + msg}
}

func (p *Platform) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/open-apis/auth/v3/tenant_access_token/internal" {
		p.tenantToken(w, r)
		return
	}
	if (r.URL.Path == "/open-apis/im/v1/images" || r.URL.Path == "/open-apis/im/v1/files") && r.Method == http.MethodPost {
		if aerr := p.authorize(r); aerr != nil {
			reply(w, nil, aerr)
			return
		}
		data, aerr := p.upload(r)
		reply(w, data, aerr)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/open-apis/im/v1/messages")
	if !ok {
		http.NotFound(w, r)
		return
	}
	if aerr := p.authorize(r); aerr != nil {
		reply(w, nil, aerr)
		return
	}
	parts := strings.Split(strings.TrimPrefix(rest, "/"), "/")
	var (
		data any
		aerr *apiError
	)
	switch {
	case rest == "" && r.Method == http.MethodPost:
		data, aerr = p.create(r)
	case len(parts) == 1 && parts[0] != "" && r.Method == http.MethodPut:
		data, aerr = p.update(r, parts[0])
	case len(parts) == 1 && parts[0] != "" && r.Method == http.MethodPatch:
		data, aerr = p.patch(r, parts[0])
	case len(parts) == 3 && parts[1] == "resources" && r.Method == http.MethodGet:
		p.resource(w, r, parts[0], parts[2])
		return
	default:
		http.NotFound(w, r)
		return
	}
	reply(w, data, aerr)
}

// reply writes {code, msg, data}.
func reply(w http.ResponseWriter, data any, aerr *apiError) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Tt-Logid", randomHex(10))
	body := map[string]any{"code": 0, "msg": "success", "data": data}
	if data == nil {
		body["data"] = map[string]any{}
	}
	if aerr != nil {
		body = map[string]any{"code": aerr.code, "msg": aerr.msg,
			"error": map[string]any{"log_id": randomHex(10), "troubleshooter": "fake: no troubleshooter"}}
		if aerr.code == 99991400 {
			w.Header().Set("x-ogw-ratelimit-limit", "5")
			w.Header().Set("x-ogw-ratelimit-reset", strconv.Itoa(aerr.reset))
		}
		w.WriteHeader(aerr.status)
	}
	json.NewEncoder(w).Encode(body)
}

func (p *Platform) tenantToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	var in struct {
		AppID     string `json:"app_id"`
		AppSecret string `json:"app_secret"`
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&in); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]any{"code": 9499, "msg": "Bad Request"})
		return
	}
	switch {
	case in.AppID != AppID:
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]any{"code": 10003, "msg": "invalid param"})
		return
	case in.AppSecret != AppSecret:
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]any{"code": 10014, "msg": "app secret invalid"})
		return
	}
	p.mu.Lock()
	p.issued++
	tok := fmt.Sprintf("t-g1044fake%04d%s", p.issued, randomHex(8))
	p.tokens[tok] = time.Now().Add(p.tokenTTL)
	ttl := int(p.tokenTTL / time.Second)
	p.mu.Unlock()
	json.NewEncoder(w).Encode(map[string]any{"code": 0, "msg": "ok", "tenant_access_token": tok, "expire": ttl})
}

func (p *Platform) authorize(r *http.Request) *apiError {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || tok == "" {
		return &apiError{status: http.StatusBadRequest, code: 99991661,
			msg: "Missing access token for authorization. Please make a request with token attached."}
	}
	p.mu.Lock()
	exp, ok := p.tokens[tok]
	p.mu.Unlock()
	if !ok || time.Now().After(exp) {
		return &apiError{status: http.StatusBadRequest, code: 99991663,
			msg: "Invalid access token for authorization. Please make a request with token attached."}
	}
	return nil
}

// throttle spends one of the calls Throttle asked to refuse.
func (p *Platform) throttle() *apiError {
	after, ok := p.Take()
	if !ok {
		return nil
	}
	return &apiError{status: http.StatusTooManyRequests, code: 99991400, msg: "request trigger frequency limit",
		reset: int(math.Ceil(after.Seconds()))}
}

// readBody reads a JSON request of at most limit bytes.
// It returns the body's size.
func readBody(r *http.Request, limit int, v any) (int, *apiError) {
	b, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	if err != nil {
		return 0, &apiError{status: http.StatusBadRequest, code: 9499, msg: "Bad Request"}
	}
	if len(b) > limit {
		return 0, tooLong
	}
	if err := json.Unmarshal(b, v); err != nil {
		return 0, &apiError{status: http.StatusBadRequest, code: 9499, msg: "Bad Request: " + err.Error()}
	}
	return len(b), nil
}

// tooLong refuses a request over the size limit of its msg_type.
var tooLong = &apiError{status: http.StatusBadRequest, code: 230025, msg: "The length of the message content reaches its limit."}

// create is POST /open-apis/im/v1/messages.
func (p *Platform) create(r *http.Request) (any, *apiError) {
	if aerr := p.throttle(); aerr != nil {
		return nil, aerr
	}
	if t := r.URL.Query().Get("receive_id_type"); t != "chat_id" {
		return nil, &apiError{status: http.StatusBadRequest, code: 99992402,
			msg: fmt.Sprintf("field validation failed: receive_id_type %q (the fake knows chat_id only)", t)}
	}
	var in struct {
		ReceiveID string `json:"receive_id"`
		MsgType   string `json:"msg_type"`
		Content   string `json:"content"`
		UUID      string `json:"uuid"`
	}
	n, aerr := readBody(r, maxTextBody, &in)
	if aerr != nil {
		return nil, aerr
	}
	if in.MsgType == "interactive" && n > maxCardBody {
		return nil, tooLong
	}
	if in.ReceiveID == "" {
		return nil, &apiError{status: http.StatusBadRequest, code: 99992402, msg: "field validation failed: receive_id is required"}
	}
	if len(in.UUID) > 50 {
		return nil, &apiError{status: http.StatusBadRequest, code: 99992402, msg: "field validation failed: uuid is longer than 50"}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	shared, aerr := p.checkContent(in.MsgType, in.Content)
	if aerr != nil {
		return nil, aerr
	}
	if m := p.uuids[in.UUID]; in.UUID != "" && m != nil && time.Since(m.sent) < uuidTTL {
		return resourceOf(m), nil // the same request again: the same message
	}
	p.seq++
	m := &message{id: fmt.Sprintf("om_bot%06d", p.seq), chatID: in.ReceiveID, msgType: in.MsgType, content: in.Content,
		sharedCard: shared, sent: time.Now()}
	p.msgs[m.id] = m
	p.chats[m.chatID] = append(p.chats[m.chatID], m)
	if in.UUID != "" {
		p.uuids[in.UUID] = m
	}
	if p.lose > 0 {
		p.lose--
		return nil, &apiError{status: http.StatusBadGateway, code: 0, msg: "lost"}
	}
	return resourceOf(m), nil
}

// upload is POST /open-apis/im/v1/images and /open-apis/im/v1/files.
func (p *Platform) upload(r *http.Request) (any, *apiError) {
	image := r.URL.Path == "/open-apis/im/v1/images"
	limit := maxFile
	if image {
		limit = maxImage
	}
	if err := r.ParseMultipartForm(int64(limit) + 1<<20); err != nil {
		return nil, &apiError{status: http.StatusBadRequest, code: 9499, msg: "Bad Request: " + err.Error()}
	}
	field, keyName, prefix := "file", "file_key", "file_v3_"
	if image {
		field, keyName, prefix = "image", "image_key", "img_v3_"
		if r.FormValue("image_type") != "message" {
			return nil, &apiError{status: http.StatusBadRequest, code: 234001, msg: "Invalid request param: image_type"}
		}
	} else {
		switch r.FormValue("file_type") {
		case "opus", "mp4", "pdf", "doc", "xls", "ppt", "stream":
		default:
			return nil, &apiError{status: http.StatusBadRequest, code: 234001, msg: "Invalid request param: file_type"}
		}
		if r.FormValue("file_name") == "" {
			return nil, &apiError{status: http.StatusBadRequest, code: 234001, msg: "Invalid request param: file_name"}
		}
	}
	f, hdr, err := r.FormFile(field)
	if err != nil {
		return nil, &apiError{status: http.StatusBadRequest, code: 234001, msg: "Invalid request param: " + field}
	}
	defer f.Close()
	data, _ := io.ReadAll(f)
	switch {
	case len(data) == 0:
		return nil, &apiError{status: http.StatusBadRequest, code: 234010, msg: "File's size can't be 0."}
	case len(data) > limit:
		return nil, &apiError{status: http.StatusBadRequest, code: 234006, msg: "The file size exceed the limit."}
	}
	name := r.FormValue("file_name")
	if name == "" {
		name = hdr.Filename
	}
	mime := http.DetectContentType(data)
	if image && !strings.HasPrefix(mime, "image/") {
		return nil, &apiError{status: http.StatusBadRequest, code: 234011, msg: "Can't regonnize the image format."}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	key := fmt.Sprintf("%s%06d", prefix, p.seq)
	p.uploads[key] = resource{name: name, mime: mime, data: data}
	return map[string]string{keyName: key}, nil
}

// update is PUT /open-apis/im/v1/messages/:id: edits a text message.
func (p *Platform) update(r *http.Request, id string) (any, *apiError) {
	if aerr := p.throttle(); aerr != nil {
		return nil, aerr
	}
	var in struct {
		MsgType string `json:"msg_type"`
		Content string `json:"content"`
	}
	if _, aerr := readBody(r, maxTextBody, &in); aerr != nil {
		return nil, aerr
	}
	if in.MsgType != "text" && in.MsgType != "post" {
		return nil, invalid("msg_type: only text and post messages can be edited")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, aerr := p.checkContent(in.MsgType, in.Content); aerr != nil {
		return nil, aerr
	}
	m := p.msgs[id]
	switch {
	case m == nil:
		return nil, &apiError{status: http.StatusBadRequest, code: 230002, msg: "The bot can not be outside the group / message not found."}
	case m.msgType != "text" && m.msgType != "post":
		return nil, invalid("the message is not a text or post message")
	case m.edits >= maxTextEdit:
		return nil, &apiError{status: http.StatusBadRequest, code: 230072, msg: "The message has reached the number of times it can be edited."}
	}
	m.msgType, m.content = in.MsgType, in.Content
	m.edits++
	return resourceOf(m), nil
}

// patch is PATCH /open-apis/im/v1/messages/:id: replaces a shared card.
func (p *Platform) patch(r *http.Request, id string) (any, *apiError) {
	if aerr := p.throttle(); aerr != nil {
		return nil, aerr
	}
	var in struct {
		Content string `json:"content"`
	}
	if _, aerr := readBody(r, maxCardBody, &in); aerr != nil {
		return nil, aerr
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	shared, aerr := p.checkContent("interactive", in.Content)
	if aerr != nil {
		return nil, aerr
	}
	m := p.msgs[id]
	switch {
	case m == nil:
		return nil, &apiError{status: http.StatusBadRequest, code: 230002, msg: "message not found"}
	case m.msgType != "interactive":
		return nil, invalid("the message is not a card")
	case !m.sharedCard || !shared:
		return nil, &apiError{status: http.StatusBadRequest, code: 230099,
			msg: "Failed to update card: only shared cards (config.update_multi true) can be updated"}
	}
	m.content = in.Content
	m.edits++
	return nil, nil
}

// resource is GET /open-apis/im/v1/messages/:id/resources/:key.
func (p *Platform) resource(w http.ResponseWriter, r *http.Request, messageID, key string) {
	p.mu.Lock()
	res, ok := p.resources[key]
	p.mu.Unlock()
	if typ := r.URL.Query().Get("type"); typ != "image" && typ != "file" {
		reply(w, nil, &apiError{status: http.StatusBadRequest, code: 99992402, msg: "field validation failed: type"})
		return
	}
	if !ok || res.messageID != messageID {
		reply(w, nil, &apiError{status: http.StatusBadRequest, code: 234003, msg: "File not in msg."})
		return
	}
	w.Header().Set("Content-Type", res.mime)
	w.Header().Set("Content-Length", strconv.Itoa(len(res.data)))
	w.Write(res.data)
}

// fakeCard is the part of a card (JSON 1.0) the fake reads.
type fakeCard struct {
	Config struct {
		UpdateMulti bool `json:"update_multi"`
	} `json:"config"`
	Elements []struct {
		Tag     string `json:"tag"`
		Content string `json:"content"`
		Text    *struct {
			Tag     string `json:"tag"`
			Content string `json:"content"`
		} `json:"text"`
		Actions []struct {
			Tag  string `json:"tag"`
			Text struct {
				Tag     string `json:"tag"`
				Content string `json:"content"`
			} `json:"text"`
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"actions"`
	} `json:"elements"`
}

// checkContent validates a message's content for its msg_type and says
// whether a card is shared. p.mu is held.
func (p *Platform) checkContent(msgType, content string) (bool, *apiError) {
	switch msgType {
	case "image", "file":
		var c struct {
			ImageKey string `json:"image_key"`
			FileKey  string `json:"file_key"`
		}
		json.Unmarshal([]byte(content), &c)
		key := c.ImageKey
		if msgType == "file" {
			key = c.FileKey
		}
		if _, ok := p.uploads[key]; !ok || !strings.HasPrefix(key, map[string]string{"image": "img_", "file": "file_"}[msgType]) {
			return false, invalid("content: unknown " + msgType + " key")
		}
		return false, nil
	case "text":
		var c struct {
			Text *string `json:"text"`
		}
		if json.Unmarshal([]byte(content), &c) != nil || c.Text == nil || *c.Text == "" {
			return false, invalid("content: not a text message's {\"text\": ...}")
		}
		return false, nil
	case "interactive":
		var c fakeCard
		if err := json.Unmarshal([]byte(content), &c); err != nil {
			return false, &apiError{status: http.StatusBadRequest, code: 230099, msg: "Failed to create card content: " + err.Error()}
		}
		if len(c.Elements) == 0 {
			return false, &apiError{status: http.StatusBadRequest, code: 230099, msg: "Failed to create card content: no elements"}
		}
		for _, el := range c.Elements {
			switch el.Tag {
			case "div":
				if el.Text == nil || (el.Text.Tag != "plain_text" && el.Text.Tag != "lark_md") {
					return false, &apiError{status: http.StatusBadRequest, code: 230099, msg: "Failed to create card content: a div's text must be plain_text or lark_md"}
				}
			case "markdown", "hr":
			case "action":
				if len(el.Actions) == 0 {
					return false, &apiError{status: http.StatusBadRequest, code: 230099, msg: "Failed to create card content: an action without actions"}
				}
				for _, a := range el.Actions {
					var v map[string]any
					if a.Tag != "button" || a.Text.Tag != "plain_text" || (len(a.Value) > 0 && json.Unmarshal(a.Value, &v) != nil) {
						return false, &apiError{status: http.StatusBadRequest, code: 230099, msg: "Failed to create card content: a button must have plain_text text and an object value"}
					}
				}
			default:
				return false, &apiError{status: http.StatusBadRequest, code: 230099, msg: "Failed to create card content: unknown tag " + el.Tag}
			}
		}
		return c.Config.UpdateMulti, nil
	}
	return false, invalid("msg_type: the fake knows text, interactive, image and file")
}

// resourceOf is a message as the API answers it.
func resourceOf(m *message) map[string]any {
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	return map[string]any{
		"message_id": m.id, "root_id": "", "parent_id": "", "msg_type": m.msgType,
		"create_time": now, "update_time": now, "deleted": false, "updated": m.edits > 0,
		"chat_id": m.chatID,
		"sender":  map[string]string{"id": AppID, "id_type": "app_id", "sender_type": "app", "tenant_key": tenantKey},
		"body":    map[string]string{"content": m.content},
	}
}

// render is a message as a user sees it. p.mu is held.
func (p *Platform) render(m *message) gatewaytest.Message {
	out := gatewaytest.Message{ID: m.id, Edits: m.edits}
	switch m.msgType {
	case "image", "file":
		var c struct {
			ImageKey string `json:"image_key"`
			FileKey  string `json:"file_key"`
		}
		json.Unmarshal([]byte(m.content), &c)
		if u, ok := p.uploads[c.ImageKey+c.FileKey]; ok {
			out.Files = []gateway.Attachment{{Name: u.name, MIME: u.mime, Data: u.data}}
		}
	case "text":
		var c struct {
			Text string `json:"text"`
		}
		json.Unmarshal([]byte(m.content), &c)
		out.Text = c.Text
	case "interactive":
		var c fakeCard
		json.Unmarshal([]byte(m.content), &c)
		var lines []string
		for _, el := range c.Elements {
			switch {
			case el.Tag == "div" && el.Text != nil:
				lines = append(lines, el.Text.Content)
			case el.Tag == "markdown":
				lines = append(lines, el.Content)
			case el.Tag == "action":
				for _, a := range el.Actions {
					var v struct {
						Data string `json:"data"`
					}
					json.Unmarshal(a.Value, &v)
					out.Buttons = append(out.Buttons, gateway.Button{Label: a.Text.Content, Data: v.Data})
				}
			}
		}
		out.Text = strings.Join(lines, "\n")
	}
	return out
}
