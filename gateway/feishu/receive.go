package feishu

import (
	"crypto/subtle"
	"errors"
	"io"
	"net/http"

	"github.com/reinhq/rein/gateway"
)

// maxBody caps a request of the event subscription; Feishu's are a few KB.
const maxBody = 1 << 20

// HTTPHandler implements gateway.HTTPReceiver: it serves the event
// subscription's request URL, /events (set
// https://HOST/<channel name>/events as both the event and the callback
// request URL in the developer console, and subscribe to
// im.message.receive_v1 and card.action.trigger).
//
// A request is verified before anything else: with an Encrypt Key, its
// X-Lark-Signature (the url_verification challenge, which Feishu does not
// sign, must decrypt with the key instead); and always the Verification
// Token it carries. It is answered 200 only after h returned nil, else 500,
// and Feishu delivers it again (by the same event_id).
func (c *Channel) HTTPHandler(h gateway.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.serveEvents(w, r, h)
	})
}

func (c *Channel) serveEvents(w http.ResponseWriter, r *http.Request, h gateway.Handler) {
	if r.URL.Path != "/events" && r.URL.Path != "/events/" {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "cannot read the body", http.StatusBadRequest)
		return
	}
	signed := false
	if c.encryptKey != "" && r.Header.Get("X-Lark-Signature") != "" {
		if err := verifySignature(r.Header.Get("X-Lark-Request-Timestamp"), r.Header.Get("X-Lark-Request-Nonce"),
			r.Header.Get("X-Lark-Signature"), c.encryptKey, body); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		signed = true
	}
	env, err := parseEnvelope(body, c.encryptKey)
	if err != nil {
		status := http.StatusUnauthorized
		if signed {
			status = http.StatusBadRequest
		}
		http.Error(w, err.Error(), status)
		return
	}
	if c.encryptKey != "" && !signed && env.Type != "url_verification" {
		http.Error(w, "the event is not signed (X-Lark-Signature) though an Encrypt Key is configured", http.StatusUnauthorized)
		return
	}
	if subtle.ConstantTimeCompare([]byte(env.token()), []byte(c.verificationToken)) != 1 {
		http.Error(w, "the verification token does not match: check the Verification Token", http.StatusUnauthorized)
		return
	}
	u, err := parseUpdate(env)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch {
	case u.challenge != "":
		writeJSON(w, map[string]string{"challenge": u.challenge})
		return
	case u.message != nil:
		if err := c.attach(r.Context(), u); err != nil {
			http.Error(w, "cannot fetch the message's images; deliver it again", http.StatusInternalServerError)
			return
		}
		if err := h.HandleMessage(r.Context(), *u.message); err != nil {
			http.Error(w, "not stored; deliver it again", http.StatusInternalServerError)
			return
		}
	case u.action != nil:
		if err := h.HandleAction(r.Context(), *u.action); err != nil {
			http.Error(w, "not stored; deliver it again", http.StatusInternalServerError)
			return
		}
	}
	// A card callback may answer a toast or a new card; {} changes nothing
	// (the gateway edits the card itself).
	writeJSON(w, struct{}{})
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(b)
}
