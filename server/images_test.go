package server_test

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/reinhq/rein/api"
)

var (
	pngBytes = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{1}, 64)...)
	gifBytes = append([]byte("GIF89a"), bytes.Repeat([]byte{2}, 64)...)
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// API-4, LOOP-2: a message's images reach the runtime decoded, their type
// read from their bytes.
func TestMessageImages(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t, "alice")
	decode[api.Accepted](t, e.do(t, "POST", "/sessions/"+f.session+"/messages", f.tok, api.Message{Text: "what is this?",
		Images: []api.Image{{MediaType: "image/png", Data: b64(pngBytes)}, {Data: "data:image/gif;base64," + b64(gifBytes)}}}), http.StatusAccepted)
	subs := e.rt.subs()
	if len(subs) != 1 || len(subs[0].Images) != 2 {
		t.Fatalf("submissions %+v", subs)
	}
	if img := subs[0].Images[1]; img.MediaType != "image/gif" || !bytes.Equal(img.Data, gifBytes) || !bytes.Equal(subs[0].Images[0].Data, pngBytes) {
		t.Errorf("second image %s of %d bytes", img.MediaType, len(img.Data))
	}
}

// API-4: the attack table of message images: each bad payload gets its
// problem status, names the image, and queues nothing.
func TestMessageImageAttacks(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t, "alice")
	big := b64(append(pngBytes, make([]byte, 5<<20)...))
	four := b64(append(pngBytes, make([]byte, 4<<20)...))
	many := make([]api.Image, 21)
	for i := range many {
		many[i] = api.Image{Data: b64(pngBytes)}
	}
	tests := []struct {
		name   string
		images []api.Image
		status int
		detail string
	}{
		{"attack: one image over 5 MiB", []api.Image{{Data: big}}, http.StatusRequestEntityTooLarge, "body.images[0]: image too large"},
		{"attack: over 20 MiB in all", []api.Image{{Data: four}, {Data: four}, {Data: four}, {Data: four}, {Data: four}},
			http.StatusRequestEntityTooLarge, "over the limit of 20.0 MiB per message"},
		{"attack: svg declared", []api.Image{{MediaType: "image/svg+xml", Data: b64([]byte("<svg onload='alert(1)'/>"))}},
			http.StatusUnsupportedMediaType, "is not one of image/png"},
		{"attack: html sent as png", []api.Image{{MediaType: "image/png", Data: b64([]byte("<html><script>x()</script>"))}},
			http.StatusUnsupportedMediaType, "not a PNG, JPEG, GIF or WebP"},
		{"attack: lying declared type", []api.Image{{MediaType: "image/jpeg", Data: b64(pngBytes)}},
			http.StatusUnprocessableEntity, "declared image/jpeg, but the bytes are image/png"},
		{"attack: bad base64", []api.Image{{Data: "%%%%not-base64"}}, http.StatusUnprocessableEntity, "not standard base64"},
		{"attack: empty data", []api.Image{{Data: ""}}, http.StatusUnprocessableEntity, "the image is empty"},
		{"attack: too many", many, http.StatusUnprocessableEntity, "expected array length <= 20"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(t, "POST", "/sessions/"+f.session+"/messages", f.tok, api.Message{Text: "x", Images: tt.images})
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			p := r.problem(t)
			text := p.Detail
			for _, er := range p.Errors {
				text += " | " + er.Location + ": " + er.Message
			}
			if !strings.Contains(text, tt.detail) {
				t.Errorf("problem %q does not say %q", text, tt.detail)
			}
		})
	}
	if n := len(e.rt.subs()); n != 0 {
		t.Errorf("%d refused messages reached the runtime", n)
	}
	// Past the body bound the server stops reading: 413 before decoding.
	huge := strings.Repeat("A", 30<<20)
	r := e.do(t, "POST", "/sessions/"+f.session+"/messages", f.tok, `{"text":"x","images":[{"data":"`+huge+`"}]}`)
	if r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("30 MiB body: status %d, want 413", r.status)
	}
}

// API-4: another caller's session is a 404 whatever images are sent.
func TestMessageImagesOtherCaller(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t, "alice")
	r := e.do(t, "POST", "/sessions/"+f.session+"/messages", token(t, "mallory"), api.Message{Text: "x", Images: []api.Image{{Data: "bad"}}})
	if r.status != http.StatusNotFound {
		t.Errorf("status %d, want 404", r.status)
	}
}

// API-4: the OpenAPI document tells clients about images: the schema,
// its count bound, and the 413/415/422 answers of send-message.
func TestOpenAPIMessageImages(t *testing.T) {
	e := newEnv(t)
	doc := e.srv.OpenAPI()
	op := doc.Paths["/sessions/{id}/messages"].Post
	for _, code := range []string{"413", "415", "422"} {
		if op.Responses[code] == nil {
			t.Errorf("send-message documents no %s", code)
		}
	}
	msg := doc.Components.Schemas.Map()["Message"]
	if msg == nil || msg.Properties["images"] == nil {
		t.Fatal("no images in the Message schema")
	}
	if imgs := msg.Properties["images"]; imgs.MaxItems == nil || *imgs.MaxItems != 20 {
		t.Errorf("images maxItems %v, want 20", imgs.MaxItems)
	}
	img := doc.Components.Schemas.Map()["Image"]
	if img == nil || img.Properties["data"] == nil || img.Properties["media_type"] == nil {
		t.Errorf("Image schema %+v", img)
	}
}
