package discordfake

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// The gateway's opcodes and close codes.
// https://discord.com/developers/docs/topics/opcodes-and-status-codes
const (
	opDispatch       = 0
	opHeartbeat      = 1
	opIdentify       = 2
	opResume         = 6
	opInvalidSession = 9
	opHello          = 10
	opHeartbeatACK   = 11

	closeAuthFailed   = 4004
	closeAlreadyAuthd = 4005
	closeDecodeError  = 4002

	intentMessageContent = 1 << 15
)

// heartbeatInterval is Discord's usual, in milliseconds.
const heartbeatInterval = 41250

var upgrader = websocket.Upgrader{}

// conn is a bot's gateway connection.
type conn struct {
	ws *websocket.Conn
	// wmu serializes writes; seq is the last dispatch's sequence number.
	wmu       sync.Mutex
	seq       int64
	content   bool
	sessionID string
}

// write sends a frame; c.wmu is held.
func (c *conn) write(op int, t string, d any) error {
	f := payload{Op: op, D: d}
	if op == opDispatch {
		c.seq++
		s := c.seq
		f.S, f.T = &s, &t
	}
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.ws.WriteJSON(f)
}

// dispatch sends ev to c.
func (c *conn) dispatch(ev event) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.write(opDispatch, ev.t, c.visible(ev.d))
}

// visible is what the bot sees of d: a message without its content and
// attachments when the bot did not ask for the MESSAGE_CONTENT intent (as
// Discord does in servers).
func (c *conn) visible(d any) any {
	if m, ok := d.(message); ok && !c.content && m.Author.ID != BotID {
		m.Content = ""
		m.Attachments = []attachment{}
		return m
	}
	return d
}

// dispatch sends ev to the connected bots, or holds it until one connects.
func (p *Platform) dispatch(ev event) {
	p.mu.Lock()
	conns := make([]*conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	if len(conns) == 0 && !p.dropOffline {
		p.queued = append(p.queued, ev)
	}
	p.mu.Unlock()
	for _, c := range conns {
		c.dispatch(ev)
	}
}

// serveGateway speaks the gateway protocol on a websocket.
func (p *Platform) serveGateway(w http.ResponseWriter, r *http.Request) {
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	ws.SetReadLimit(1 << 20)
	c := &conn{ws: ws}
	defer func() {
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
		_ = ws.Close()
	}()
	c.wmu.Lock()
	err = c.write(opHello, "", map[string]any{"heartbeat_interval": heartbeatInterval})
	c.wmu.Unlock()
	if err != nil {
		return
	}
	identified := false
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var f struct {
			Op int             `json:"op"`
			D  json.RawMessage `json:"d"`
		}
		if json.Unmarshal(data, &f) != nil {
			c.close(closeDecodeError, "Decode error")
			return
		}
		switch f.Op {
		case opHeartbeat:
			c.wmu.Lock()
			err = c.write(opHeartbeatACK, "", nil)
			c.wmu.Unlock()
		case opIdentify:
			if identified {
				c.close(closeAlreadyAuthd, "Already authenticated.")
				return
			}
			var id struct {
				Token   string `json:"token"`
				Intents int    `json:"intents"`
			}
			if json.Unmarshal(f.D, &id) != nil || strings.TrimPrefix(id.Token, "Bot ") != Token {
				c.close(closeAuthFailed, "Authentication failed.")
				return
			}
			identified = true
			c.content = id.Intents&intentMessageContent != 0
			err = p.ready(c)
		case opResume:
			// The fake keeps no sessions to resume: the bot identifies anew.
			c.wmu.Lock()
			err = c.write(opInvalidSession, "", false)
			c.wmu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// ready answers an IDENTIFY: READY, then the events held while no bot was
// connected.
func (p *Platform) ready(c *conn) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	p.mu.Lock()
	c.sessionID = "session-" + p.id()
	p.conns[c] = true
	p.identifies++
	queued := p.queued
	p.queued = nil
	ws := "ws://" + p.srv.Listener.Addr().String() + "/gateway-ws"
	p.mu.Unlock()
	err := c.write(opDispatch, "READY", map[string]any{
		"v":                  9,
		"user":               user{ID: BotID, Username: "rein", Discriminator: "0", Bot: true},
		"guilds":             []map[string]any{{"id": GuildID, "unavailable": true}},
		"session_id":         c.sessionID,
		"resume_gateway_url": ws,
		"application":        map[string]any{"id": ApplicationID, "flags": 0},
	})
	if err != nil {
		return err
	}
	for _, ev := range queued {
		if err := c.write(opDispatch, ev.t, c.visible(ev.d)); err != nil {
			return err
		}
	}
	return nil
}

// close ends the connection with a gateway close code.
func (c *conn) close(code int, reason string) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
}
