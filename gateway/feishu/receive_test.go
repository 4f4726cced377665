package feishu

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/feishu/feishufake"
)

func TestURLVerification(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			e := setup(t, m.opts...)
			e.p.VerifyURL(t) // fails the test unless the challenge is echoed
		})
	}
}

func TestInboundMessage(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			e := setup(t, m.opts...)
			e.p.Send(t, "5001", "1001", "hello there\nsecond line")
			got := e.rec.messages()
			if len(got) != 1 {
				t.Fatalf("the handler got %+v; want one message", got)
			}
			in := got[0]
			if in.ChatID != "5001" || in.UserID != "1001" || in.ID == "" || in.Text != "hello there\nsecond line" {
				t.Errorf("got %+v", in)
			}
			if s := e.p.Statuses(); !slices.Equal(s, []int{200}) || e.p.Pending() != 0 {
				t.Errorf("statuses %v, pending %d; want one 200", s, e.p.Pending())
			}
		})
	}
}

// The platform sees 200 only when the handler stored the update; else it
// delivers it again, by the same event_id.
func TestAcknowledgement(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			e := setup(t, m.opts...)
			e.rec.failNext(1)
			e.p.Send(t, "5001", "1001", "first")
			if s := e.p.Statuses(); !slices.Equal(s, []int{500}) || e.p.Pending() != 1 || len(e.rec.messages()) != 0 {
				t.Fatalf("after a failed store: statuses %v, pending %d, stored %+v; want 500, kept", s, e.p.Pending(), e.rec.messages())
			}
			e.p.Send(t, "5001", "1001", "second")
			got := e.rec.messages()
			if len(got) != 2 || got[0].Text != "first" || got[1].Text != "second" || e.p.Pending() != 0 {
				t.Fatalf("after the platform retried: stored %+v, pending %d", got, e.p.Pending())
			}
			e.p.Redeliver(t)
			got = e.rec.messages()
			if len(got) != 3 || got[2].ID != got[1].ID {
				t.Errorf("a redelivered event has another ID: %+v", got)
			}
		})
	}
}

func TestPress(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			e := setup(t, m.opts...)
			ref, err := e.ch.Send(t.Context(), gateway.Outgoing{ChatID: "5002", Text: "Allow?", Buttons: []gateway.Button{
				{Label: "Allow once", Data: "perm:7:once"}, {Label: "Deny", Data: "perm:7:deny"}}})
			if err != nil {
				t.Fatal(err)
			}
			e.rec.failNext(1)
			e.p.Press(t, ref, "1001", "perm:7:deny")
			if e.p.Pending() != 1 {
				t.Fatalf("a press the handler failed was acknowledged: statuses %v", e.p.Statuses())
			}
			e.p.Redeliver(t)
			got := e.rec.pressed()
			if len(got) != 1 {
				t.Fatalf("the handler got %+v; want one press", got)
			}
			want := gateway.Action{ChatID: "5002", UserID: "1001", ID: got[0].ID, Data: "perm:7:deny", Message: ref}
			if got[0] != want || got[0].ID == "" {
				t.Errorf("got %+v; want %+v", got[0], want)
			}
		})
	}
}

func TestImageInbound(t *testing.T) {
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 100)...)
	tests := []struct {
		name     string
		data     []byte
		mime     string
		wantText string
		wantAtt  bool
	}{
		{"png", png, "image/png", "", true},
		{"too large", make([]byte, gateway.MaxAttachment+1), "image/jpeg", "larger than 10 MB", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := setup(t)
			e.p.SendImage(t, "5001", "1001", tt.mime, tt.data)
			got := e.rec.messages()
			if len(got) != 1 {
				t.Fatalf("the handler got %d messages; statuses %v", len(got), e.p.Statuses())
			}
			if !strings.Contains(got[0].Text, tt.wantText) {
				t.Errorf("text %q; want %q in it", got[0].Text, tt.wantText)
			}
			if !tt.wantAtt {
				if len(got[0].Attachments) != 0 {
					t.Errorf("attachments %d; want none", len(got[0].Attachments))
				}
				return
			}
			if len(got[0].Attachments) != 1 {
				t.Fatalf("attachments %d; want one", len(got[0].Attachments))
			}
			a := got[0].Attachments[0]
			if a.MIME != tt.mime || !bytes.Equal(a.Data, tt.data) || a.Name != "image1.png" {
				t.Errorf("attachment %s %s (%d bytes)", a.Name, a.MIME, len(a.Data))
			}
		})
	}
}

func TestMessageKinds(t *testing.T) {
	post, _ := json.Marshal(map[string]any{"title": "Report", "content": [][]map[string]string{
		{{"tag": "at", "user_id": "ou_bot", "user_name": "bot"}, {"tag": "text", "text": "look at "}, {"tag": "a", "text": "this", "href": "https://example.com"}},
		{{"tag": "text", "text": "thanks"}},
	}})
	tests := []struct {
		name, msgType, content string
		mentions               []feishufake.Mention
		want                   string
	}{
		{"mention stripped", "text", `{"text":"@_user_1 list the files"}`,
			[]feishufake.Mention{{Key: "@_user_1", OpenID: "ou_bot", Name: "rein"}}, "list the files"},
		{"mention in the middle", "text", `{"text":"hi @_user_1 there @_all"}`,
			[]feishufake.Mention{{Key: "@_user_1", OpenID: "ou_bot", Name: "rein"}}, "hi there"},
		{"rich text", "post", string(post), nil, "Report\nlook at this (https://example.com)\nthanks"},
		{"a file", "file", `{"file_key":"file_v2_1","file_name":"a.pdf"}`, nil, `a Feishu "file" message`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := setup(t)
			e.p.SendRaw(t, "5001", "1001", tt.msgType, tt.content, tt.mentions)
			got := e.rec.messages()
			if len(got) != 1 || !strings.Contains(got[0].Text, tt.want) {
				t.Fatalf("got %+v; want the text %q", got, tt.want)
			}
			if tt.msgType != "file" && got[0].Text != tt.want {
				t.Errorf("text %q; want %q", got[0].Text, tt.want)
			}
		})
	}
}

func TestAppMessagesIgnored(t *testing.T) {
	e := &envelope{Schema: "2.0", Header: eventHeader{EventID: "e1", EventType: "im.message.receive_v1"},
		Event: json.RawMessage(`{"sender":{"sender_id":{"open_id":"ou_app"},"sender_type":"app"},
			"message":{"message_id":"om_1","chat_id":"oc_1","message_type":"text","content":"{\"text\":\"hi\"}"}}`)}
	u, err := parseUpdate(e)
	if err != nil || u.message != nil || u.action != nil {
		t.Errorf("a bot's message: %+v, %v; want it ignored", u, err)
	}
}

// request is a raw post to the channel's /events.
type request struct {
	method, path string
	header       http.Header
	body         []byte
}

func (e *env) do(t *testing.T, r request) int {
	t.Helper()
	if r.method == "" {
		r.method = http.MethodPost
	}
	if r.path == "" {
		r.path = "/events"
	}
	req, err := http.NewRequestWithContext(t.Context(), r.method, e.url+r.path, bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	if r.header != nil {
		req.Header = r.header
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// event is a plain im.message.receive_v1 with the verification token tok.
func event(tok string) []byte {
	b, _ := json.Marshal(map[string]any{
		"schema": "2.0",
		"header": map[string]string{"event_id": "ev1", "event_type": "im.message.receive_v1", "token": tok, "app_id": feishufake.AppID},
		"event": map[string]any{
			"sender":  map[string]any{"sender_id": map[string]string{"open_id": "1001"}, "sender_type": "user"},
			"message": map[string]any{"message_id": "om_1", "chat_id": "5001", "message_type": "text", "content": `{"text":"hi"}`},
		},
	})
	return b
}

func TestRefused(t *testing.T) {
	good := event(feishufake.VerificationToken)
	plainTests := []struct {
		name string
		req  request
		want int
	}{
		{"accepted", request{body: good}, 200},
		{"wrong token", request{body: event("guess")}, 401},
		{"no token", request{body: event("")}, 401},
		{"not JSON", request{body: []byte("<xml/>")}, 401},
		{"encrypted without a key", request{body: []byte(`{"encrypt":"` + feishufake.Encrypt(good, "k") + `"}`)}, 401},
		{"url_verification with a wrong token", request{body: []byte(`{"type":"url_verification","challenge":"c","token":"guess"}`)}, 401},
		{"GET", request{method: http.MethodGet}, 405},
		{"another path", request{path: "/other", body: good}, 404},
		{"oversize", request{body: append(good, bytes.Repeat([]byte(" "), maxBody)...)}, 413},
	}
	t.Run("plain", func(t *testing.T) {
		for _, tt := range plainTests {
			t.Run(tt.name, func(t *testing.T) {
				e := setup(t)
				if got := e.do(t, tt.req); got != tt.want {
					t.Errorf("status %d; want %d", got, tt.want)
				}
				if n := len(e.rec.messages()); (n == 1) != (tt.want == 200) {
					t.Errorf("the handler got %d messages", n)
				}
			})
		}
	})

	key := feishufake.EncryptKey
	p := feishufake.New(t, feishufake.WithEncryptKey(key))
	sealed, hdr := p.Seal(good)
	withHeader := func(k, v string) http.Header {
		h := hdr.Clone()
		if v == "" {
			h.Del(k)
		} else {
			h.Set(k, v)
		}
		return h
	}
	otherKey, otherHdr := feishufake.New(t, feishufake.WithEncryptKey("another key")).Seal(good)
	badToken, badTokenHdr := p.Seal(event("guess"))
	encTests := []struct {
		name string
		req  request
		want int
	}{
		{"accepted", request{body: sealed, header: hdr}, 200},
		{"tampered body", request{body: bytes.Replace(sealed, []byte(`"encrypt":"`), []byte(`"encrypt":"AAAA`), 1), header: hdr}, 401},
		{"wrong signature", request{body: sealed, header: withHeader("X-Lark-Signature", strings.Repeat("0", 64))}, 401},
		{"no signature", request{body: sealed, header: withHeader("X-Lark-Signature", "")}, 401},
		{"no nonce", request{body: sealed, header: withHeader("X-Lark-Request-Nonce", "")}, 401},
		{"another key", request{body: otherKey, header: otherHdr}, 401},
		{"signed, wrong token", request{body: badToken, header: badTokenHdr}, 401},
		{"unsigned plain event", request{body: good}, 401},
		{"unsigned encrypted event", request{body: sealed}, 401},
	}
	t.Run("encrypted", func(t *testing.T) {
		for _, tt := range encTests {
			t.Run(tt.name, func(t *testing.T) {
				e := setup(t, feishufake.WithEncryptKey(key))
				if got := e.do(t, tt.req); got != tt.want {
					t.Errorf("status %d; want %d", got, tt.want)
				}
				if n := len(e.rec.messages()); (n == 1) != (tt.want == 200) {
					t.Errorf("the handler got %d messages", n)
				}
			})
		}
	})
}
