package discord

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/bwmarrin/discordgo"
)

// The channel's own parsing of platform input: turning a dispatched
// interaction or message into the gateway's, and reading Retry-After. None
// may panic on anything Discord (or someone posing as it) sends.
func FuzzDispatch(f *testing.F) {
	f.Add([]byte(`{"id":"1","type":3,"channel_id":"5001","data":{"custom_id":"allow:1","component_type":2},"member":{"user":{"id":"1001","username":"u"}},"message":{"id":"9"}}`))
	f.Add([]byte(`{"id":"1","type":3,"channel_id":"5001","data":{"custom_id":"x"},"user":{"id":"1001"}}`))
	f.Add([]byte(`{"id":"1","type":2,"data":{"name":"x"}}`))
	f.Add([]byte(`{"id":"2","channel_id":"5001","author":{"id":"1001","username":"u"},"content":"hi","attachments":[{"filename":"a.png","size":3,"url":"ftp://x"}]}`))
	f.Add([]byte(`{"type":3,"data":null,"member":{"user":null}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var i discordgo.Interaction
		if json.Unmarshal(data, &i) == nil && i.Type == discordgo.InteractionMessageComponent {
			if a, ok := action(&i); ok && (a.ID == "" || a.UserID == "" || a.ChatID == "" || a.Data == "") {
				t.Fatalf("action with blanks: %+v", a)
			}
		}
		var m discordgo.Message
		if json.Unmarshal(data, &m) == nil && fromUser(&m, "900") {
			c := &Channel{client: &http.Client{Transport: refuseAll{}}}
			in := c.inbound(t.Context(), &m)
			if in.ID != m.ID || in.UserID == "" {
				t.Fatalf("inbound = %+v", in)
			}
		}
	})
}

// refuseAll fails every request: fuzzing never reaches the network.
type refuseAll struct{}

func (refuseAll) RoundTrip(*http.Request) (*http.Response, error) { return nil, http.ErrNotSupported }

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"1", "1.5", "", "-3", "NaN", "1e400", "0x10", "99999"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		h := http.Header{}
		h.Set("Retry-After", a)
		h.Set("X-RateLimit-Reset-After", b)
		if d := retryAfter(h); d < 0 || d.Hours() > 1 {
			t.Fatalf("retryAfter(%q, %q) = %v", a, b, d)
		}
	})
}
