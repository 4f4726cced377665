package feishufake

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// call makes a raw API call and returns the HTTP status and the answer's
// code and data.
func call(t *testing.T, p *Platform, method, path, token string, body any) (int, int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(t.Context(), method, p.URL()+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Code  int            `json:"code"`
		Data  map[string]any `json:"data"`
		Token string         `json:"tenant_access_token"`
	}
	json.NewDecoder(resp.Body).Decode(&out)
	if out.Token != "" {
		out.Data = map[string]any{"token": out.Token}
	}
	return resp.StatusCode, out.Code, out.Data
}

func TestAPI(t *testing.T) {
	p := New(t)
	_, code, data := call(t, p, "POST", "/open-apis/auth/v3/tenant_access_token/internal", "", map[string]string{"app_id": AppID, "app_secret": AppSecret})
	if code != 0 {
		t.Fatalf("token: code %d", code)
	}
	tok := data["token"].(string)
	text := `{"text":"hi"}`
	plainCard := `{"elements":[{"tag":"div","text":{"tag":"plain_text","content":"x"}}]}`
	_, _, sent := call(t, p, "POST", "/open-apis/im/v1/messages?receive_id_type=chat_id", tok, map[string]string{"receive_id": "5001", "msg_type": "text", "content": text})
	textID, _ := sent["message_id"].(string)
	_, _, sent = call(t, p, "POST", "/open-apis/im/v1/messages?receive_id_type=chat_id", tok, map[string]string{"receive_id": "5001", "msg_type": "interactive", "content": plainCard})
	cardID, _ := sent["message_id"].(string)
	if textID == "" || cardID == "" {
		t.Fatal("the sends failed")
	}
	tests := []struct {
		name, method, path, token string
		body                      any
		wantStatus, wantCode      int
	}{
		{"secret wrong", "POST", "/open-apis/auth/v3/tenant_access_token/internal", "", map[string]string{"app_id": AppID, "app_secret": "x"}, 400, 10014},
		{"no token", "POST", "/open-apis/im/v1/messages?receive_id_type=chat_id", "", map[string]string{}, 400, 99991661},
		{"bad token", "POST", "/open-apis/im/v1/messages?receive_id_type=chat_id", "t-guess", map[string]string{}, 400, 99991663},
		{"open_id unsupported", "POST", "/open-apis/im/v1/messages?receive_id_type=open_id", tok, map[string]string{"receive_id": "u", "msg_type": "text", "content": text}, 400, 99992402},
		{"content not a string's JSON", "POST", "/open-apis/im/v1/messages?receive_id_type=chat_id", tok, map[string]string{"receive_id": "5001", "msg_type": "text", "content": "hi"}, 400, 230001},
		{"unknown card tag", "POST", "/open-apis/im/v1/messages?receive_id_type=chat_id", tok, map[string]string{"receive_id": "5001", "msg_type": "interactive", "content": `{"elements":[{"tag":"blink"}]}`}, 400, 230099},
		{"PUT a text", "PUT", "/open-apis/im/v1/messages/" + textID, tok, map[string]string{"msg_type": "text", "content": `{"text":"edited"}`}, 200, 0},
		{"PUT a card", "PUT", "/open-apis/im/v1/messages/" + cardID, tok, map[string]string{"msg_type": "text", "content": `{"text":"edited"}`}, 400, 230001},
		{"PATCH a text", "PATCH", "/open-apis/im/v1/messages/" + textID, tok, map[string]string{"content": plainCard}, 400, 230001},
		{"PATCH a card not shared", "PATCH", "/open-apis/im/v1/messages/" + cardID, tok, map[string]string{"content": plainCard}, 400, 230099},
		{"PATCH an unknown message", "PATCH", "/open-apis/im/v1/messages/om_none", tok, map[string]string{"content": plainCard}, 400, 230002},
		{"resource of another message", "GET", "/open-apis/im/v1/messages/" + textID + "/resources/img_x?type=image", tok, nil, 400, 234003},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, code, _ := call(t, p, tt.method, tt.path, tt.token, tt.body)
			if status != tt.wantStatus || code != tt.wantCode {
				t.Errorf("HTTP %d code %d; want HTTP %d code %d", status, code, tt.wantStatus, tt.wantCode)
			}
		})
	}
	if m := p.Messages("5001"); len(m) != 2 || m[0].Text != "edited" || m[0].Edits != 1 || !strings.Contains(m[1].Text, "x") {
		t.Errorf("messages %+v", m)
	}
}

// An event the gateway cannot take stays pending until a later Send.
func TestPendingWithoutTarget(t *testing.T) {
	p := New(t)
	p.Send(t, "5001", "1001", "hello")
	if p.Pending() != 1 {
		t.Errorf("pending %d; want the event kept", p.Pending())
	}
}
