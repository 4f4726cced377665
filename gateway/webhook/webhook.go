// Package webhook is the gateway's generic channel (SPEC GW-2): any
// system that can post JSON talks to the agent. Messages come in as
// signed POSTs to /<name>/messages (button presses to /<name>/actions);
// replies go out as signed POSTs to the configured callback URL. Both
// directions sign the same way: X-Rein-Timestamp (Unix seconds) and
// X-Rein-Signature "sha256=" + hex(HMAC-SHA256(secret, timestamp + "." +
// body)); a request more than five minutes old is refused.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/reinhq/rein/gateway"
)

// Config is the channel's settings in the gateway's file.
type Config struct {
	// CallbackURL receives the replies.
	CallbackURL string `yaml:"callback_url"`
	// SecretEnv names the variable holding the shared secret
	// (default REIN_WEBHOOK_SECRET).
	SecretEnv string `yaml:"secret_env"`
	// MaxText is the most runes of one reply (default 4000).
	MaxText int `yaml:"max_text"`
	// Buttons says the receiver renders buttons and posts presses to
	// /actions; without them permission questions ask for /approve ID.
	Buttons bool `yaml:"buttons"`
	// NoEdit says the receiver cannot edit messages: only final replies
	// are sent.
	NoEdit bool `yaml:"no_edit"`
}

// Channel is the generic webhook channel.
type Channel struct {
	name     string
	cfg      Config
	secret   []byte
	callback string
	client   *http.Client
	now      func() time.Time
}

// New returns the channel named name.
func New(name string, cfg Config, getenv func(string) string) (*Channel, error) {
	if cfg.SecretEnv == "" {
		cfg.SecretEnv = "REIN_WEBHOOK_SECRET"
	}
	secret := getenv(cfg.SecretEnv)
	if len(secret) < 16 {
		return nil, fmt.Errorf("webhook %s: set %s to a shared secret of at least 16 characters (e.g. openssl rand -hex 32); "+
			"both sides sign their requests with it", name, cfg.SecretEnv)
	}
	u, err := url.Parse(cfg.CallbackURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("webhook %s: callback_url %q: want the http(s) URL that receives the replies", name, cfg.CallbackURL)
	}
	if cfg.MaxText <= 0 {
		cfg.MaxText = 4000
	}
	return &Channel{name: name, cfg: cfg, secret: []byte(secret), callback: cfg.CallbackURL,
		client: &http.Client{Timeout: 30 * time.Second}, now: time.Now}, nil
}

// Name implements gateway.Channel.
func (c *Channel) Name() string { return c.name }

// Limits implements gateway.Channel.
func (c *Channel) Limits() gateway.Limits {
	return gateway.Limits{MaxText: c.cfg.MaxText, CanEdit: !c.cfg.NoEdit, Buttons: c.cfg.Buttons, Files: true}
}

// Sign returns the signature headers' values of body at t.
func Sign(secret []byte, t time.Time, body []byte) (timestamp, signature string) {
	timestamp = strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(timestamp))
	mac.Write([]byte("."))
	mac.Write(body)
	return timestamp, "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// maxSkew is how old (or early) a signed request may be.
const maxSkew = 5 * time.Minute

// Verify checks a request's signature headers against body at now.
func Verify(secret []byte, now time.Time, timestamp, signature string, body []byte) error {
	sec, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return errors.New("X-Rein-Timestamp is missing or not Unix seconds")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > maxSkew || d < -maxSkew {
		return errors.New("X-Rein-Timestamp is more than five minutes off: check the sender's clock")
	}
	_, want := Sign(secret, time.Unix(sec, 0), body)
	if !hmac.Equal([]byte(want), []byte(signature)) {
		return errors.New("X-Rein-Signature does not match: sign timestamp + \".\" + body with HMAC-SHA256 and the shared secret")
	}
	return nil
}

// Message is the body of POST /messages.
type Message struct {
	ID          string     `json:"id"`
	ChatID      string     `json:"chat_id"`
	UserID      string     `json:"user_id"`
	UserName    string     `json:"user_name,omitempty"`
	Text        string     `json:"text"`
	Attachments []FileJSON `json:"attachments,omitempty"`
}

// ActionJSON is the body of POST /actions: a button pressed.
type ActionJSON struct {
	ID        string `json:"id"`
	ChatID    string `json:"chat_id"`
	UserID    string `json:"user_id"`
	UserName  string `json:"user_name,omitempty"`
	MessageID string `json:"message_id"`
	Data      string `json:"data"`
}

// FileJSON is a file in either direction; Data is base64 in JSON.
type FileJSON struct {
	Name string `json:"name"`
	MIME string `json:"mime,omitempty"`
	Data []byte `json:"data"`
}

// Outbound is the body the callback URL receives.
type Outbound struct {
	// Type is "send" or "edit".
	Type      string           `json:"type"`
	ChatID    string           `json:"chat_id"`
	MessageID string           `json:"message_id,omitempty"` // edit: the message to change
	Text      string           `json:"text"`
	Buttons   []gateway.Button `json:"buttons,omitempty"`
	Files     []FileJSON       `json:"files,omitempty"`
	// Key (send: a part of a reply) is the same every time the gateway
	// sends that part — a retry after a lost answer, or after a restart:
	// a receiver that keeps the keys it took, for an hour, answers a
	// repeat with the message it posted and posts nothing.
	Key string `json:"key,omitempty"`
}

// maxBody caps an inbound request (attachments are base64).
const maxBody = 16 << 20

// HTTPHandler implements gateway.HTTPReceiver.
func (c *Channel) HTTPHandler(h gateway.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /messages", func(w http.ResponseWriter, r *http.Request) {
		var m Message
		if !c.read(w, r, &m) {
			return
		}
		if m.ID == "" || m.ChatID == "" || m.UserID == "" {
			httpError(w, http.StatusBadRequest, "id, chat_id and user_id are required")
			return
		}
		in := gateway.Inbound{ChatID: m.ChatID, UserID: m.UserID, UserName: m.UserName, ID: m.ID, Text: m.Text}
		for _, f := range m.Attachments {
			if len(f.Data) > gateway.MaxAttachment {
				in.Text += fmt.Sprintf("\n[%s was too large to keep: %d bytes]", f.Name, len(f.Data))
				continue
			}
			in.Attachments = append(in.Attachments, gateway.Attachment{Name: f.Name, MIME: f.MIME, Data: f.Data})
		}
		c.done(w, h.HandleMessage(r.Context(), in))
	})
	mux.HandleFunc("POST /actions", func(w http.ResponseWriter, r *http.Request) {
		var a ActionJSON
		if !c.read(w, r, &a) {
			return
		}
		if a.ID == "" || a.ChatID == "" || a.UserID == "" {
			httpError(w, http.StatusBadRequest, "id, chat_id and user_id are required")
			return
		}
		c.done(w, h.HandleAction(r.Context(), gateway.Action{ChatID: a.ChatID, UserID: a.UserID, UserName: a.UserName, ID: a.ID,
			Data: a.Data, Message: gateway.MessageRef{ChatID: a.ChatID, ID: a.MessageID}}))
	})
	return mux
}

// read verifies and decodes a request; false when it answered an error.
func (c *Channel) read(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		httpError(w, http.StatusRequestEntityTooLarge, "the body is larger than 16 MiB or unreadable")
		return false
	}
	if err := Verify(c.secret, c.now(), r.Header.Get("X-Rein-Timestamp"), r.Header.Get("X-Rein-Signature"), body); err != nil {
		httpError(w, http.StatusUnauthorized, err.Error())
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		httpError(w, http.StatusBadRequest, "the body is not the JSON expected: "+err.Error())
		return false
	}
	return true
}

// done answers a handled request: 200 once stored, 500 (deliver it
// again) when not.
func (c *Channel) done(w http.ResponseWriter, err error) {
	if err != nil {
		httpError(w, http.StatusInternalServerError, "not stored; deliver it again: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"ok":true}`+"\n")
}

func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	b, _ := json.Marshal(map[string]any{"ok": false, "error": msg})
	w.Write(append(b, '\n'))
}

// Send implements gateway.Channel.
func (c *Channel) Send(ctx context.Context, m gateway.Outgoing) (gateway.MessageRef, error) {
	out := Outbound{Type: "send", ChatID: m.ChatID, Text: m.Text, Buttons: m.Buttons, Key: m.Key}
	for _, f := range m.Files {
		out.Files = append(out.Files, FileJSON(f))
	}
	var resp struct {
		MessageID string `json:"message_id"`
	}
	if err := c.post(ctx, out, &resp); err != nil {
		return gateway.MessageRef{}, err
	}
	return gateway.MessageRef{ChatID: m.ChatID, ID: resp.MessageID}, nil
}

// Edit implements gateway.Channel.
func (c *Channel) Edit(ctx context.Context, ref gateway.MessageRef, m gateway.Outgoing) error {
	return c.post(ctx, Outbound{Type: "edit", ChatID: ref.ChatID, MessageID: ref.ID, Text: m.Text, Buttons: m.Buttons}, nil)
}

// post sends a signed body to the callback URL: 2xx is done; 429 and 5xx
// are a *gateway.RetryError (with Retry-After's seconds); other codes
// fail.
func (c *Channel) post(ctx context.Context, v, into any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.callback, bytes.NewReader(body))
	if err != nil {
		return err
	}
	ts, sig := Sign(c.secret, c.now(), body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Rein-Timestamp", ts)
	req.Header.Set("X-Rein-Signature", sig)
	resp, err := c.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &gateway.RetryError{Err: fmt.Errorf("webhook %s: %w", c.name, err)}
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		after, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return &gateway.RetryError{After: time.Duration(after) * time.Second,
			Err: fmt.Errorf("webhook %s: the callback answered %s", c.name, resp.Status)}
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("webhook %s: the callback answered %s: %s", c.name, resp.Status, bytes.TrimSpace(data))
	}
	if into != nil && len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, into); err != nil {
			return fmt.Errorf("webhook %s: the callback's answer is not JSON: %w", c.name, err)
		}
	}
	return nil
}
