package feishu

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/feishu/feishufake"
)

// nopHandler stores nothing and accepts everything.
type nopHandler struct{}

func (nopHandler) HandleMessage(context.Context, gateway.Inbound) error { return nil }
func (nopHandler) HandleAction(context.Context, gateway.Action) error   { return nil }

// FuzzEvents posts arbitrary bodies (plain and encrypted with the right
// key) to the handler: it never panics and never answers 200 to what did
// not carry the verification token.
func FuzzEvents(f *testing.F) {
	f.Add([]byte(event(feishufake.VerificationToken)), false)
	f.Add([]byte(`{"type":"url_verification","challenge":"c","token":"`+feishufake.VerificationToken+`"}`), true)
	f.Add([]byte(`{"schema":"2.0","header":{"event_id":"e","event_type":"card.action.trigger","token":"`+feishufake.VerificationToken+
		`"},"event":{"operator":{"open_id":"u"},"action":{"value":{"data":"x"}},"context":{"open_message_id":"m","open_chat_id":"c"}}}`), false)
	f.Add([]byte(`{"schema":"2.0","header":{"event_type":"im.message.receive_v1","token":"`+feishufake.VerificationToken+
		`","event_id":"e"},"event":{"sender":{"sender_id":{"open_id":"u"}},"message":{"chat_id":"c","message_type":"post","content":"{\"content\":[[{\"tag\":\"img\"}]]}"}}}`), false)
	f.Add([]byte(`{"encrypt":"!!"}`), false)
	f.Add([]byte(`null`), true)
	key := feishufake.EncryptKey
	plain := &Channel{name: "f", verificationToken: feishufake.VerificationToken, apiURL: "http://127.0.0.1:1"}
	enc := &Channel{name: "f", verificationToken: feishufake.VerificationToken, encryptKey: key, apiURL: "http://127.0.0.1:1"}
	p := feishufake.New(f, feishufake.WithEncryptKey(key))
	f.Fuzz(func(t *testing.T, body []byte, encrypted bool) {
		c, hdr := plain, http.Header{}
		if encrypted {
			c = enc
			body, hdr = p.Seal(body)
		}
		req := httptest.NewRequest(http.MethodPost, "/events", bytes.NewReader(body))
		req.Header = hdr
		w := httptest.NewRecorder()
		c.HTTPHandler(nopHandler{}).ServeHTTP(w, req)
		if w.Code == http.StatusOK && !bytes.Contains(body, []byte(feishufake.VerificationToken)) && !encrypted {
			t.Errorf("200 to a body without the verification token: %q", body)
		}
	})
}

// FuzzDecrypt: arbitrary "encrypt" values never panic.
func FuzzDecrypt(f *testing.F) {
	f.Add(feishufake.Encrypt([]byte(`{"a":1}`), "k"), "k")
	f.Add("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "k")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, s, key string) {
		if out, err := decrypt(s, key); err == nil && len(out) > len(s) {
			t.Errorf("decrypted %d bytes from %d", len(out), len(s))
		}
	})
}

// FuzzSignature: only the signature of the body itself verifies.
func FuzzSignature(f *testing.F) {
	f.Add("1700000000", "nonce", "key", []byte("{}"), "")
	f.Add("", "", "", []byte(nil), "00")
	f.Fuzz(func(t *testing.T, ts, nonce, key string, body []byte, sig string) {
		good := feishufake.Sign(ts, nonce, key, body)
		if ts != "" && nonce != "" {
			if err := verifySignature(ts, nonce, good, key, body); err != nil {
				t.Errorf("the right signature is refused: %v", err)
			}
		}
		if sig != good && verifySignature(ts, nonce, sig, key, body) == nil && !equalFold(sig, good) {
			t.Errorf("a wrong signature %q verifies", sig)
		}
	})
}

func equalFold(a, b string) bool { return bytes.EqualFold([]byte(a), []byte(b)) }
