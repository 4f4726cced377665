package telegramfake

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/reinhq/rein/gateway"
)

// Telegram's limits, as the fake enforces them.
const (
	maxText         = 4096     // UTF-16 code units of a message's text
	maxCaption      = 1024     // of a caption
	maxCallbackData = 64       // bytes of a button's callback_data
	maxGetFile      = 20 << 20 // the most getFile hands to a bot
	maxPollTimeout  = 50       // seconds a getUpdates waits at most here
	notModifiedText = "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message"
)

// apiError is a Bot API refusal: the HTTP status is the error_code.
type apiError struct {
	code       int
	desc       string
	retryAfter int
}

func badRequest(desc string) *apiError { return &apiError{code: 400, desc: "Bad Request: " + desc} }

func (p *Platform) serve(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/file/bot"); ok {
		p.download(w, rest)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	if !ok {
		reply(w, nil, &apiError{code: 404, desc: "Not Found"})
		return
	}
	token, method, ok := strings.Cut(rest, "/")
	if !ok || token != Token {
		// Telegram answers a well-formed but unknown token 401, a
		// malformed one 404.
		reply(w, nil, &apiError{code: 401, desc: "Unauthorized"})
		return
	}
	prm, err := readParams(w, r)
	if err != nil {
		reply(w, nil, badRequest("can't parse request: "+err.Error()))
		return
	}
	var (
		result any
		aerr   *apiError
	)
	switch strings.ToLower(method) {
	case "getme":
		result = botUser
	case "getupdates":
		result, aerr = p.getUpdates(r, prm)
	case "sendmessage":
		result, aerr = p.sendMessage(prm)
	case "editmessagetext":
		result, aerr = p.editMessageText(prm)
	case "answercallbackquery":
		result, aerr = p.answerCallbackQuery(prm)
	case "senddocument":
		result, aerr = p.sendFile(prm, "document")
	case "sendphoto":
		result, aerr = p.sendFile(prm, "photo")
	case "getfile":
		result, aerr = p.getFile(prm)
	default:
		aerr = &apiError{code: 404, desc: "Not Found"}
	}
	reply(w, result, aerr)
}

func reply(w http.ResponseWriter, result any, aerr *apiError) {
	w.Header().Set("Content-Type", "application/json")
	resp := tgResponse{OK: true, Result: result}
	status := http.StatusOK
	if aerr != nil {
		status = aerr.code
		resp = tgResponse{ErrorCode: aerr.code, Description: aerr.desc}
		if aerr.retryAfter > 0 {
			resp.Parameters = &tgParameters{RetryAfter: aerr.retryAfter}
		}
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(resp)
}

// getUpdates: updates with an update_id below offset are confirmed and
// forgotten; a negative offset keeps only the last -offset ones; with
// nothing to return the call waits up to timeout seconds.
func (p *Platform) getUpdates(r *http.Request, prm params) (any, *apiError) {
	offset, _ := strconv.ParseInt(prm.get("offset"), 10, 64)
	limit, _ := strconv.Atoi(prm.get("limit"))
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	timeout, _ := strconv.Atoi(prm.get("timeout"))
	timeout = min(max(timeout, 0), maxPollTimeout)
	deadline := time.NewTimer(time.Duration(timeout) * time.Second)
	defer deadline.Stop()

	p.mu.Lock()
	p.pollGen++
	gen := p.pollGen
	p.wake() // terminates an older waiting call
	switch {
	case offset > 0:
		i := 0
		for i < len(p.queue) && p.queue[i].id < offset {
			i++
		}
		p.queue = p.queue[i:]
	case offset < 0:
		if keep := int(-offset); keep < len(p.queue) {
			p.queue = p.queue[len(p.queue)-keep:]
		}
	}
	for {
		if p.pollGen != gen {
			p.mu.Unlock()
			return nil, &apiError{code: 409, desc: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"}
		}
		out := make([]json.RawMessage, 0, limit)
		seen := map[int64]bool{}
		for _, s := range p.redeliver {
			if len(out) < limit && !seen[s.id] {
				out = append(out, s.body)
				seen[s.id] = true
			}
		}
		p.redeliver = nil
		for _, s := range p.queue {
			if len(out) < limit && !seen[s.id] {
				out = append(out, s.body)
				seen[s.id] = true
			}
		}
		if len(out) > 0 || timeout == 0 {
			p.mu.Unlock()
			return out, nil
		}
		wake := p.changed
		p.waiting++
		p.mu.Unlock()
		select {
		case <-wake:
		case <-deadline.C:
			timeout = 0
		case <-r.Context().Done():
			p.mu.Lock()
			p.waiting--
			p.mu.Unlock()
			return []json.RawMessage{}, nil
		}
		p.mu.Lock()
		p.waiting--
	}
}

// throttle answers a send or edit 429 while Throttle asks; p.mu is held.
func (p *Platform) throttle() *apiError {
	after, ok := p.Take()
	if !ok {
		return nil
	}
	secs := max(1, int(math.Ceil(after.Seconds())))
	return &apiError{
		code:       429,
		desc:       "Too Many Requests: retry after " + strconv.Itoa(secs),
		retryAfter: secs,
	}
}

// target resolves chat_id to a chat the bot may write to; p.mu is held.
func (p *Platform) target(prm params) (*chat, *apiError) {
	raw := prm.get("chat_id")
	if raw == "" {
		return nil, badRequest("chat_id is empty")
	}
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return nil, badRequest("chat not found")
	}
	return p.chat(id, id), nil
}

// markup parses reply_markup: an inline keyboard whose buttons each carry
// 1-64 bytes of callback_data (or a URL).
func markup(prm params) (*tgMarkup, *apiError) {
	if !prm.has("reply_markup") {
		return nil, nil
	}
	var mk tgMarkup
	if err := json.Unmarshal([]byte(prm.get("reply_markup")), &mk); err != nil {
		return nil, badRequest("can't parse reply keyboard markup JSON object")
	}
	for _, row := range mk.InlineKeyboard {
		for _, b := range row {
			if b.Text == "" {
				return nil, badRequest("text buttons are unallowed in the inline keyboard")
			}
			if b.CopyText != nil {
				var ct struct {
					Text string `json:"text"`
				}
				if json.Unmarshal(*b.CopyText, &ct) != nil || ct.Text == "" {
					return nil, badRequest("BUTTON_COPY_TEXT_INVALID")
				}
			}
			switch {
			case b.CallbackData != nil:
				if n := len(*b.CallbackData); n == 0 || n > maxCallbackData {
					return nil, badRequest("BUTTON_DATA_INVALID")
				}
			case b.URL == "" && b.CopyText == nil:
				return nil, badRequest("can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard")
			}
		}
	}
	if len(mk.InlineKeyboard) == 0 {
		return nil, nil
	}
	return &mk, nil
}

func textLen(s string) int { return len(utf16.Encode([]rune(s))) }

func (p *Platform) sendMessage(prm params) (any, *apiError) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.throttle(); e != nil {
		return nil, e
	}
	c, e := p.target(prm)
	if e != nil {
		return nil, e
	}
	text := prm.get("text")
	if strings.TrimSpace(text) == "" {
		return nil, badRequest("message text is empty")
	}
	if textLen(text) > maxText {
		return nil, badRequest("message is too long")
	}
	mk, e := markup(prm)
	if e != nil {
		return nil, e
	}
	c.nextID++
	u := botUser
	bm := &botMessage{msg: tgMessage{MessageID: c.nextID, From: &u, Chat: c.info, Date: time.Now().Unix(), Text: text, ReplyMarkup: mk}}
	c.bot = append(c.bot, bm)
	return bm.msg, nil
}

// editMessageText replaces text and keyboard; a call without reply_markup
// removes the keyboard, as Telegram does.
func (p *Platform) editMessageText(prm params) (any, *apiError) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.throttle(); e != nil {
		return nil, e
	}
	if prm.get("inline_message_id") != "" {
		return nil, badRequest("MESSAGE_ID_INVALID")
	}
	c, e := p.target(prm)
	if e != nil {
		return nil, e
	}
	bm := c.find(prm.get("message_id"))
	if bm == nil {
		return nil, badRequest("message to edit not found")
	}
	if bm.msg.Text == "" {
		return nil, badRequest("there is no text in the message to edit")
	}
	text := prm.get("text")
	if strings.TrimSpace(text) == "" {
		return nil, badRequest("message text is empty")
	}
	if textLen(text) > maxText {
		return nil, badRequest("MESSAGE_TOO_LONG")
	}
	mk, e := markup(prm)
	if e != nil {
		return nil, e
	}
	if text == bm.msg.Text && sameMarkup(mk, bm.msg.ReplyMarkup) {
		return nil, &apiError{code: 400, desc: notModifiedText}
	}
	bm.msg.Text = text
	bm.msg.ReplyMarkup = mk
	bm.msg.EditDate = time.Now().Unix()
	bm.edits++
	return bm.msg, nil
}

func sameMarkup(a, b *tgMarkup) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func (p *Platform) answerCallbackQuery(prm params) (any, *apiError) {
	p.mu.Lock()
	defer p.mu.Unlock()
	id := prm.get("callback_query_id")
	answered, ok := p.callbacks[id]
	if !ok || answered {
		return nil, badRequest("query is too old and response timeout expired or query ID is invalid")
	}
	p.callbacks[id] = true
	p.answered = append(p.answered, id)
	return true, nil
}

// sendFile is sendDocument (field "document") and sendPhoto ("photo"):
// the file comes as a multipart upload, or as the file_id of a file the
// fake knows.
func (p *Platform) sendFile(prm params, field string) (any, *apiError) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.throttle(); e != nil {
		return nil, e
	}
	c, e := p.target(prm)
	if e != nil {
		return nil, e
	}
	up, ok := prm.files[field]
	if !ok {
		ref := prm.get(field)
		if strings.HasPrefix(ref, "attach://") {
			up, ok = prm.files[strings.TrimPrefix(ref, "attach://")]
		} else if f, known := p.files[ref]; known {
			up, ok = upload{name: f.path[strings.LastIndexByte(f.path, '/')+1:], data: f.data}, true
		}
	}
	if !ok {
		return nil, badRequest("there is no " + field + " in the request")
	}
	if len(up.data) == 0 {
		return nil, badRequest("file must be non-empty")
	}
	caption := prm.get("caption")
	if textLen(caption) > maxCaption {
		return nil, badRequest("message caption is too long")
	}
	mk, e := markup(prm)
	if e != nil {
		return nil, e
	}
	c.nextID++
	u := botUser
	msg := tgMessage{MessageID: c.nextID, From: &u, Chat: c.info, Date: time.Now().Unix(), Caption: caption, ReplyMarkup: mk}
	att := gateway.Attachment{Name: up.name, MIME: mimeOf(up.name), Data: up.data}
	if field == "photo" {
		if !strings.HasPrefix(http.DetectContentType(up.data), "image/") {
			return nil, badRequest("IMAGE_PROCESS_FAILED")
		}
		f := p.addFile("photos", "jpg", up.data)
		msg.Photo = []tgPhotoSize{{FileID: f.id, FileUniqueID: f.unique, Width: 1280, Height: 960, FileSize: len(up.data)}}
	} else {
		f := p.addFile("documents", "", up.data)
		msg.Document = &tgDocument{FileID: f.id, FileUniqueID: f.unique, FileName: up.name, MimeType: att.MIME, FileSize: len(up.data)}
	}
	c.bot = append(c.bot, &botMessage{msg: msg, files: []gateway.Attachment{att}})
	return msg, nil
}

func (p *Platform) getFile(prm params) (any, *apiError) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, ok := p.files[prm.get("file_id")]
	if !ok {
		return nil, badRequest("invalid file_id")
	}
	if len(f.data) > maxGetFile {
		return nil, badRequest("file is too big")
	}
	return tgFile{FileID: f.id, FileUniqueID: f.unique, FileSize: len(f.data), FilePath: f.path}, nil
}

// download serves /file/bot<token>/<file_path>.
func (p *Platform) download(w http.ResponseWriter, rest string) {
	token, fpath, ok := strings.Cut(rest, "/")
	if !ok || token != Token {
		reply(w, nil, &apiError{code: 401, desc: "Unauthorized"})
		return
	}
	p.mu.Lock()
	var data []byte
	for _, f := range p.files {
		if f.path == fpath {
			data = f.data
		}
	}
	p.mu.Unlock()
	if data == nil {
		reply(w, nil, &apiError{code: 404, desc: "Not Found"})
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	_, _ = w.Write(data)
}
