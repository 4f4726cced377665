// Package telegramfake is a local fake of the Telegram Bot API
// (https://core.telegram.org/bots/api) on 127.0.0.1, for tests of the
// Telegram channel: getMe, getUpdates (long polling, with Telegram's
// offset semantics), sendMessage, editMessageText, answerCallbackQuery,
// sendDocument, sendPhoto, getFile and file downloads, at
// /bot<token>/<method> and /file/bot<token>/<path>. Its state (the update
// queue, the chats' messages) outlives the clients that talk to it, so a
// restarted channel finds what it left.
package telegramfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/gatewaytest"
)

// Token is the bot token the fake accepts; any other is answered 401.
const Token = "123456789:AAfake-token-for-tests"

// botUser is the bot as getMe and its messages' from show it.
var botUser = tgUser{ID: 123456789, IsBot: true, FirstName: "rein test bot", Username: "rein_test_bot"}

// Platform is the fake Telegram. It implements [gatewaytest.Platform].
type Platform struct {
	gatewaytest.Throttler // Throttle, Throttled

	srv *httptest.Server

	mu sync.Mutex
	// changed is closed (and replaced) whenever updates arrive or another
	// getUpdates starts, to wake a waiting long poll.
	changed chan struct{}
	// pollGen counts getUpdates calls; a waiting call whose generation is
	// no longer the newest is terminated with 409, as Telegram does.
	pollGen    int
	waiting    int // getUpdates calls waiting now
	nextUpdate int64
	queue      []stored // unconfirmed updates, update_id ascending
	newest     *stored
	redeliver  []stored // delivered once more, whatever the offset
	chats      map[int64]*chat
	files      map[string]*file // by file_id
	nextFile   int
	callbacks  map[string]bool // callback query id → answered
	nextQuery  int64
	answered   []string
}

var _ gatewaytest.Platform = (*Platform)(nil)

type stored struct {
	id   int64
	body json.RawMessage
}

type chat struct {
	info   tgChat
	nextID int
	bot    []*botMessage
}

type botMessage struct {
	msg   tgMessage
	files []gateway.Attachment
	edits int
}

type file struct {
	id, unique, path string
	data             []byte
}

// New starts the fake on 127.0.0.1; t's cleanup stops it.
func New(t testing.TB) *Platform {
	t.Helper()
	p := &Platform{
		changed:    make(chan struct{}),
		nextUpdate: 700000000,
		chats:      map[int64]*chat{},
		files:      map[string]*file{},
		callbacks:  map[string]bool{},
		nextQuery:  4242000000000000000,
	}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

// URL is the Bot API base URL ("http://127.0.0.1:PORT"), the channel's
// api_url.
func (p *Platform) URL() string { return p.srv.URL }

// Target is ignored: the bot polls Telegram.
func (p *Platform) Target(string) {}

// Send queues a text message from user in chat for the bot's next
// getUpdates. A chat id equal to the user id is the user's private chat
// with the bot, another a group.
func (p *Platform) Send(t testing.TB, chatID, userID, text string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.userMessage(t, chatID, userID)
	m.Text = text
	p.push(tgUpdate{Message: m})
}

// SendPhoto queues a photo from user in chat, with caption, as Telegram
// delivers one: in two sizes, a small thumbnail first and data itself
// last (the largest).
func (p *Platform) SendPhoto(t testing.TB, chatID, userID, caption string, data []byte) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.userMessage(t, chatID, userID)
	m.Caption = caption
	thumb := data[:min(len(data), 8)]
	small := p.addFile("photos", "jpg", thumb)
	big := p.addFile("photos", "jpg", data)
	m.Photo = []tgPhotoSize{
		{FileID: small.id, FileUniqueID: small.unique, Width: 90, Height: 90, FileSize: len(thumb)},
		{FileID: big.id, FileUniqueID: big.unique, Width: 1280, Height: 960, FileSize: len(data)},
	}
	p.push(tgUpdate{Message: m})
}

// SendDocument queues a file from user in chat, with caption.
func (p *Platform) SendDocument(t testing.TB, chatID, userID, name, mimeType, caption string, data []byte) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.userMessage(t, chatID, userID)
	m.Caption = caption
	f := p.addFile("documents", path.Ext(name), data)
	m.Document = &tgDocument{FileID: f.id, FileUniqueID: f.unique, FileName: name, MimeType: mimeType, FileSize: len(data)}
	p.push(tgUpdate{Message: m})
}

// Press queues user's press of the button with data under the bot's
// message msg. Telegram shows only the buttons a message carries, so
// pressing one it does not carry fails the test.
func (p *Platform) Press(t testing.TB, msg gateway.MessageRef, userID, data string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.chats[parseID(t, "chat", msg.ChatID)]
	if !ok {
		t.Fatalf("telegramfake: Press: no chat %s", msg.ChatID)
	}
	bm := c.find(msg.ID)
	if bm == nil {
		t.Fatalf("telegramfake: Press: the bot has no message %s in chat %s", msg.ID, msg.ChatID)
		return
	}
	if !bm.hasButton(data) {
		t.Errorf("telegramfake: Press: message %s in chat %s has no button with data %q (Telegram shows only the buttons a message carries)", msg.ID, msg.ChatID, data)
		return
	}
	p.nextQuery++
	id := strconv.FormatInt(p.nextQuery, 10)
	p.callbacks[id] = false
	shown := bm.msg
	p.push(tgUpdate{CallbackQuery: &tgCallbackQuery{
		ID:           id,
		From:         user(parseID(t, "user", userID)),
		Message:      &shown,
		ChatInstance: "-" + msg.ChatID,
		Data:         data,
	}})
}

// Redeliver makes the next getUpdates return the newest update again, as
// if Telegram had not seen it confirmed.
func (p *Platform) Redeliver(t testing.TB) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.newest == nil {
		t.Fatalf("telegramfake: Redeliver: no update yet")
	}
	p.redeliver = append(p.redeliver, *p.newest)
	p.wake()
}

// Messages returns the bot's messages in chat, oldest first, edits
// applied. A sendDocument or sendPhoto is a message of its own, its
// caption the Text.
func (p *Platform) Messages(chatID string) []gatewaytest.Message {
	id, err := strconv.ParseInt(chatID, 10, 64)
	if err != nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.chats[id]
	if !ok {
		return nil
	}
	out := make([]gatewaytest.Message, 0, len(c.bot))
	for _, bm := range c.bot {
		text := bm.msg.Text
		if text == "" {
			text = bm.msg.Caption
		}
		m := gatewaytest.Message{
			ID:    strconv.Itoa(bm.msg.MessageID),
			Text:  text,
			Files: slices.Clone(bm.files),
			Edits: bm.edits,
		}
		if bm.msg.ReplyMarkup != nil {
			for _, row := range bm.msg.ReplyMarkup.InlineKeyboard {
				for _, b := range row {
					data := ""
					if b.CallbackData != nil {
						data = *b.CallbackData
					}
					m.Buttons = append(m.Buttons, gateway.Button{Label: b.Text, Data: data})
				}
			}
		}
		out = append(out, m)
	}
	return out
}

// Pending counts the updates the bot has not confirmed yet (a getUpdates
// with an offset above their update_id confirms them).
func (p *Platform) Pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue)
}

// Answered returns the ids of the callback queries the bot answered, in
// order.
func (p *Platform) Answered() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.answered)
}

// userMessage starts a message from user in chat; p.mu is held.
func (p *Platform) userMessage(t testing.TB, chatID, userID string) *tgMessage {
	t.Helper()
	cid, uid := parseID(t, "chat", chatID), parseID(t, "user", userID)
	c := p.chat(cid, uid)
	c.nextID++
	u := user(uid)
	return &tgMessage{MessageID: c.nextID, From: &u, Chat: c.info, Date: time.Now().Unix()}
}

// chat returns chat id, creating it (private when it is the user's own
// id, as Telegram's private chat ids are the user's); p.mu is held.
func (p *Platform) chat(id, userID int64) *chat {
	c, ok := p.chats[id]
	if !ok {
		info := tgChat{ID: id, Type: "group", Title: "Group " + strconv.FormatInt(id, 10)}
		if id == userID {
			u := user(userID)
			info = tgChat{ID: id, Type: "private", FirstName: u.FirstName, Username: u.Username}
		}
		c = &chat{info: info}
		p.chats[id] = c
	}
	return c
}

// push queues an update; p.mu is held.
func (p *Platform) push(u tgUpdate) {
	p.nextUpdate++
	u.UpdateID = p.nextUpdate
	body, err := json.Marshal(u)
	if err != nil {
		panic(err) // the fake's own types always marshal
	}
	s := stored{id: u.UpdateID, body: body}
	p.queue = append(p.queue, s)
	p.newest = &s
	p.wake()
}

// wake wakes waiting long polls; p.mu is held.
func (p *Platform) wake() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// addFile stores a file for getFile and download; p.mu is held.
func (p *Platform) addFile(dir, ext string, data []byte) *file {
	p.nextFile++
	n := p.nextFile
	if ext != "" && ext[0] != '.' {
		ext = "." + ext
	}
	f := &file{
		id:     fmt.Sprintf("BQACAgIAAxkBAAI%06d", n),
		unique: fmt.Sprintf("AgAD%06d", n),
		path:   fmt.Sprintf("%s/file_%d%s", dir, n, ext),
		data:   data,
	}
	p.files[f.id] = f
	return f
}

func (c *chat) find(id string) *botMessage {
	n, err := strconv.Atoi(id)
	if err != nil {
		return nil
	}
	for _, bm := range c.bot {
		if bm.msg.MessageID == n {
			return bm
		}
	}
	return nil
}

func (bm *botMessage) hasButton(data string) bool {
	if bm.msg.ReplyMarkup == nil {
		return false
	}
	for _, row := range bm.msg.ReplyMarkup.InlineKeyboard {
		for _, b := range row {
			if b.CallbackData != nil && *b.CallbackData == data {
				return true
			}
		}
	}
	return false
}

func user(id int64) tgUser {
	s := strconv.FormatInt(id, 10)
	return tgUser{ID: id, FirstName: "User", LastName: s, Username: "user" + s}
}

func parseID(t testing.TB, what, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("telegramfake: %s id %q is not a number (Telegram's ids are integers)", what, s)
	}
	return n
}

// mimeTypes are the types the fake reports by a file's extension, fixed
// here (not the machine's mime tables) so tests see the same everywhere.
var mimeTypes = map[string]string{
	".txt": "text/plain", ".md": "text/markdown", ".csv": "text/csv",
	".json": "application/json", ".pdf": "application/pdf", ".zip": "application/zip",
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".gif": "image/gif", ".webp": "image/webp",
}

// mimeOf is the type Telegram reports for an uploaded file: by its
// extension, else application/octet-stream.
func mimeOf(name string) string {
	if t, ok := mimeTypes[strings.ToLower(path.Ext(name))]; ok {
		return t
	}
	return "application/octet-stream"
}
