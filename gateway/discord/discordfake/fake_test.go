package discordfake

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// dial opens the fake's gateway and reads HELLO.
func dial(t *testing.T, p *Platform) *websocket.Conn {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.DialContext(t.Context(), strings.Replace(p.URL(), "http", "ws", 1)+"/gateway-ws/?v=9&encoding=json", nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	var hello struct {
		Op int `json:"op"`
		D  struct {
			HeartbeatInterval int `json:"heartbeat_interval"`
		} `json:"d"`
	}
	if err := ws.ReadJSON(&hello); err != nil || hello.Op != 10 || hello.D.HeartbeatInterval == 0 {
		t.Fatalf("hello = %+v, %v", hello, err)
	}
	return ws
}

func TestGatewayIdentify(t *testing.T) {
	tests := []struct {
		name      string
		token     string
		intents   int
		wantClose int
		content   string
	}{
		{name: "bad token", token: "Bot nope", intents: 1<<9 | 1<<15, wantClose: 4004},
		{name: "with content intent", token: "Bot " + Token, intents: 1<<9 | 1<<15, content: "hi"},
		{name: "bare token, no content intent", token: Token, intents: 1 << 9, content: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(t)
			ws := dial(t, p)
			id := map[string]any{"op": 2, "d": map[string]any{"token": tt.token, "intents": tt.intents, "properties": map[string]string{"os": "linux"}}}
			if err := ws.WriteJSON(id); err != nil {
				t.Fatal(err)
			}
			var f struct {
				Op int             `json:"op"`
				S  int64           `json:"s"`
				T  string          `json:"t"`
				D  json.RawMessage `json:"d"`
			}
			err := ws.ReadJSON(&f)
			if tt.wantClose != 0 {
				var ce *websocket.CloseError
				if !errors.As(err, &ce) || ce.Code != tt.wantClose {
					t.Fatalf("read = %+v, %v; want close %d", f, err, tt.wantClose)
				}
				return
			}
			if err != nil || f.Op != 0 || f.T != "READY" || f.S != 1 || !strings.Contains(string(f.D), `"session_id"`) || !strings.Contains(string(f.D), `"resume_gateway_url"`) {
				t.Fatalf("ready = %+v %s, %v", f, f.D, err)
			}
			if err := ws.WriteJSON(map[string]any{"op": 1, "d": 1}); err != nil {
				t.Fatal(err)
			}
			if err := ws.ReadJSON(&f); err != nil || f.Op != 11 {
				t.Fatalf("heartbeat ack = %+v, %v", f, err)
			}
			p.Send(t, "5001", "1001", "hi")
			var msg struct {
				T string `json:"t"`
				S int64  `json:"s"`
				D struct {
					Content string `json:"content"`
					Author  struct {
						ID string `json:"id"`
					} `json:"author"`
				} `json:"d"`
			}
			if err := ws.ReadJSON(&msg); err != nil || msg.T != "MESSAGE_CREATE" || msg.S != 2 || msg.D.Author.ID != "1001" || msg.D.Content != tt.content {
				t.Fatalf("dispatch = %+v, %v", msg, err)
			}
		})
	}
}

func TestRESTAuthorization(t *testing.T) {
	p := New(t)
	tests := []struct {
		auth string
		want int
	}{
		{"", http.StatusUnauthorized},
		{"Bot wrong", http.StatusUnauthorized},
		{Token, http.StatusUnauthorized},
		{"Bot " + Token, http.StatusOK},
	}
	for _, tt := range tests {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, p.URL()+"/api/v9/users/@me", nil)
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("Authorization %q: %d, want %d", tt.auth, resp.StatusCode, tt.want)
		}
	}
}
