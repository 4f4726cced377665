// Package discordfake is a local fake of Discord for the discord channel's
// tests: the REST API under /api/v{n}/ (messages, components, uploads,
// interaction callbacks, 429s with Discord's headers and body) and the
// Gateway websocket (HELLO, IDENTIFY, READY, heartbeat ACKs, MESSAGE_CREATE
// and INTERACTION_CREATE dispatches), on 127.0.0.1.
//
// It keeps its state across bot connections, so a test can restart the
// channel against it. One deviation from Discord: events that arise while
// no bot is connected are held and dispatched after the next READY
// (Discord drops them), so a test need not wait for the bot to connect
// before acting as a user; [Platform.DropOffline] switches to Discord's
// behaviour.
package discordfake

import (
	"fmt"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/gatewaytest"
)

// Fixed identities of the fake.
const (
	// Token is the bot token the fake accepts (REST "Authorization: Bot
	// <Token>", and IDENTIFY).
	Token = "fake-discord-bot-token"
	// BotID is the bot user's id.
	BotID = "900000000000000001"
	// ApplicationID is the bot's application id.
	ApplicationID = "900000000000000002"
	// GuildID is the server all chats are in.
	GuildID = "900000000000000003"
)

// Platform is the fake Discord. It implements [gatewaytest.Platform].
type Platform struct {
	gatewaytest.Throttler // Throttle, Throttled

	srv *httptest.Server

	mu     sync.Mutex
	nextID uint64
	// chats holds every message of a channel, users' and the bot's.
	chats map[string][]*message
	// files are the uploads of the bot's messages, by message id.
	files map[string][]gateway.Attachment
	edits map[string]int
	// blobs are attachment contents served as the CDN, by URL path.
	blobs        map[string][]byte
	interactions map[string]*pendingInteraction
	conns        map[*conn]bool
	queued       []event
	dropOffline  bool
	last         *event

	failN      int
	failStatus int
	identifies int
	callbacks  int
}

// pendingInteraction is a press waiting for the bot's callback.
type pendingInteraction struct {
	token         string
	chat, message string
	answered      int // the callback's type; 0 before it
}

// event is a gateway dispatch: its type (t) and data (d).
type event struct {
	t string
	d any
}

// New starts the fake on 127.0.0.1; it stops when the test ends.
func New(t testing.TB) *Platform {
	p := &Platform{
		nextID:       1300000000000000000,
		chats:        map[string][]*message{},
		files:        map[string][]gateway.Attachment{},
		edits:        map[string]int{},
		blobs:        map[string][]byte{},
		interactions: map[string]*pendingInteraction{},
		conns:        map[*conn]bool{},
	}
	p.srv = httptest.NewServer(p.routes())
	t.Cleanup(func() {
		p.mu.Lock()
		conns := make([]*conn, 0, len(p.conns))
		for c := range p.conns {
			conns = append(conns, c)
		}
		p.mu.Unlock()
		for _, c := range conns {
			_ = c.ws.Close()
		}
		p.srv.Close()
	})
	return p
}

// URL is the base to set as the channel's api_url.
func (p *Platform) URL() string { return p.srv.URL }

// Env returns a getenv that gives the fake's token for
// DISCORD_BOT_TOKEN.
func (p *Platform) Env() func(string) string {
	return func(k string) string {
		if k == "DISCORD_BOT_TOKEN" {
			return Token
		}
		return ""
	}
}

// id returns a new snowflake, growing; p.mu is held.
func (p *Platform) id() string {
	p.nextID++
	return strconv.FormatUint(p.nextID, 10)
}

// Target is ignored: Discord's gateway is polled over a websocket.
func (p *Platform) Target(string) {}

// Send makes user post text in chat.
func (p *Platform) Send(t testing.TB, chatID, userID, text string) {
	t.Helper()
	p.post(chatID, userID, text, nil)
}

// Upload is a file a user posts with [Platform.SendFiles].
type Upload struct {
	Name, MIME string
	Data       []byte
}

// SendFiles makes user post text with files in chat; they are served
// at the fake's CDN URL, and named in the message's attachments.
func (p *Platform) SendFiles(t testing.TB, chatID, userID, text string, files ...Upload) string {
	t.Helper()
	return p.post(chatID, userID, text, files)
}

func (p *Platform) post(chatID, userID, text string, files []Upload) string {
	p.mu.Lock()
	m := &message{
		ID:        p.id(),
		ChannelID: chatID,
		GuildID:   GuildID,
		Author:    user{ID: userID, Username: "user" + userID, GlobalName: "User " + userID, Discriminator: "0"},
		Content:   text,
		Timestamp: time.Now().UTC().Format(time.RFC3339Nano),
	}
	for _, f := range files {
		aid := p.id()
		path := "/attachments/" + chatID + "/" + aid + "/" + f.Name
		p.blobs[path] = f.Data
		m.Attachments = append(m.Attachments, attachment{ID: aid, Filename: f.Name, ContentType: f.MIME, Size: len(f.Data), URL: p.srv.URL + path, ProxyURL: p.srv.URL + path})
	}
	norm(m)
	p.chats[chatID] = append(p.chats[chatID], m)
	ev := event{t: "MESSAGE_CREATE", d: *m}
	p.last = &ev
	p.mu.Unlock()
	p.dispatch(ev)
	return m.ID
}

// norm sets nil lists to empty, as Discord sends them.
func norm(m *message) {
	if m.Attachments == nil {
		m.Attachments = []attachment{}
	}
	if m.Embeds == nil {
		m.Embeds = []struct{}{}
	}
	if m.Mentions == nil {
		m.Mentions = []user{}
	}
	if m.Components == nil {
		m.Components = []Component{}
	}
}

// Press makes user press the button with custom_id data under the bot's
// message msg (an INTERACTION_CREATE of type 3, MESSAGE_COMPONENT).
func (p *Platform) Press(t testing.TB, msg gateway.MessageRef, userID, data string) {
	t.Helper()
	if _, err := p.press(msg, userID, data); err != nil {
		t.Fatalf("discordfake: press: %v", err)
	}
}

// PressID is [Platform.Press] returning the interaction's id.
func (p *Platform) PressID(t testing.TB, msg gateway.MessageRef, userID, data string) string {
	t.Helper()
	id, err := p.press(msg, userID, data)
	if err != nil {
		t.Fatalf("discordfake: press: %v", err)
	}
	return id
}

func (p *Platform) press(msg gateway.MessageRef, userID, data string) (string, error) {
	p.mu.Lock()
	m := p.find(msg.ChatID, msg.ID)
	if m == nil {
		p.mu.Unlock()
		return "", fmt.Errorf("no message %s in chat %s", msg.ID, msg.ChatID)
	}
	if !hasButton(m.Components, data) {
		p.mu.Unlock()
		return "", fmt.Errorf("message %s has no button %q", msg.ID, data)
	}
	in := interaction{
		ID:            p.id(),
		ApplicationID: ApplicationID,
		Type:          3,
		Data:          interactionData{CustomID: data, ComponentType: 2},
		GuildID:       GuildID,
		ChannelID:     msg.ChatID,
		Member:        member{User: user{ID: userID, Username: "user" + userID, GlobalName: "User " + userID, Discriminator: "0"}, Roles: []string{}},
		Token:         "itoken-" + p.id(),
		Version:       1,
		Message:       *m,
	}
	p.interactions[in.ID] = &pendingInteraction{token: in.Token, chat: msg.ChatID, message: msg.ID}
	ev := event{t: "INTERACTION_CREATE", d: in}
	p.last = &ev
	p.mu.Unlock()
	p.dispatch(ev)
	return in.ID, nil
}

func hasButton(cs []Component, id string) bool {
	for _, c := range cs {
		if (c.Type == 2 && c.CustomID == id) || hasButton(c.Components, id) {
			return true
		}
	}
	return false
}

// find returns the message id of chat; p.mu is held.
func (p *Platform) find(chat, id string) *message {
	for _, m := range p.chats[chat] {
		if m.ID == id {
			return m
		}
	}
	return nil
}

// Redeliver dispatches the newest user message or press again.
func (p *Platform) Redeliver(t testing.TB) {
	t.Helper()
	p.mu.Lock()
	last := p.last
	p.mu.Unlock()
	if last == nil {
		t.Fatalf("discordfake: nothing to redeliver")
	}
	p.dispatch(*last)
}

// Messages returns the bot's messages in chat, oldest first.
func (p *Platform) Messages(chatID string) []gatewaytest.Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []gatewaytest.Message
	for _, m := range p.chats[chatID] {
		if m.Author.ID != BotID {
			continue
		}
		out = append(out, gatewaytest.Message{
			ID:      m.ID,
			Text:    m.Content,
			Buttons: buttons(m.Components),
			Files:   append([]gateway.Attachment(nil), p.files[m.ID]...),
			Edits:   p.edits[m.ID],
		})
	}
	return out
}

func buttons(cs []Component) []gateway.Button {
	var out []gateway.Button
	for _, c := range cs {
		if c.Type == 2 {
			out = append(out, gateway.Button{Label: c.Label, Data: c.CustomID})
		}
		out = append(out, buttons(c.Components)...)
	}
	return out
}

// Components returns the raw components of the bot's message id, as
// Discord stores them (action rows of buttons).
func (p *Platform) Components(chatID, id string) []Component {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m := p.find(chatID, id); m != nil {
		return append([]Component(nil), m.Components...)
	}
	return nil
}

// Fail makes the next n message creates or edits fail with status (a
// 5xx: Discord is away; a 4xx: it refuses).
func (p *Platform) Fail(n, status int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failN, p.failStatus = n, status
}

// DropOffline makes events that arise while no bot is connected lost, as
// on Discord (the bot can fetch them with GET /channels/{id}/messages).
func (p *Platform) DropOffline() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropOffline = true
}

// Identifies counts the IDENTIFYs the gateway accepted (connections).
func (p *Platform) Identifies() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.identifies
}

// Connected reports whether a bot is connected and identified.
func (p *Platform) Connected() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns) > 0
}

// Answered returns the type of the bot's callback to interaction id (6
// DEFERRED_UPDATE_MESSAGE, 7 UPDATE_MESSAGE), 0 before it.
func (p *Platform) Answered(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if in := p.interactions[id]; in != nil {
		return in.answered
	}
	return 0
}

// Disconnect closes the bot's gateway connections, as Discord does when it
// restarts a gateway node; the bot is to reconnect.
func (p *Platform) Disconnect() {
	p.mu.Lock()
	conns := make([]*conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
		delete(p.conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		c.wmu.Lock()
		_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4000, "Unknown error"), time.Now().Add(time.Second))
		c.wmu.Unlock()
		_ = c.ws.Close()
	}
}
