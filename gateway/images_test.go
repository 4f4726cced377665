package gateway_test

import (
	"bytes"
	"context"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/gateway/gatewaytest"
	"github.com/reinhq/rein/gateway/webhook"
	"github.com/reinhq/rein/gateway/webhook/webhookfake"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// pngBytes is a PNG by its signature, as package attachment reads types.
var pngBytes = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0}, 64)...)

// LOOP-2, GW-1: an image a user sends in a chat goes into the user
// message (the model sees it) and is kept in the workspace's inbox; its
// type is read from its bytes, whatever the platform declared. Attack
// rows: a file declared image/jpeg whose bytes are HTML, and an image over
// 5 MiB, are not attached — the model is told why — and are only kept
// as files; a plain file stays a file.
func TestChatImagesAttached_LOOP2(t *testing.T) {
	type seen struct {
		text   string
		images []*llm.Image
	}
	got := make(chan seen, 4)
	e := gatewaytest.Start(t, hook(0), gatewaytest.Options{Vision: true, Model: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		var s seen
		for _, b := range req.Messages[len(req.Messages)-1].Content {
			switch b := b.(type) {
			case *llm.Text:
				s.text += b.Text
			case *llm.Image:
				s.images = append(s.images, b)
			}
		}
		got <- s
		return llmtest.NewScripted(llmtest.Reply{Text: "seen"}).Stream(ctx, req)
	}})
	p := e.P.(*webhookfake.Platform)
	for _, tc := range []struct {
		name     string
		file     webhook.FileJSON
		attached bool
		note     string
	}{
		{"an image", webhook.FileJSON{Name: "cat.png", MIME: "image/jpeg", Data: pngBytes}, true, "an image, attached to this message"},
		{"HTML calling itself a photo", webhook.FileJSON{Name: "photo.jpg", MIME: "image/jpeg", Data: []byte("<html><script>alert(1)</script>")}, false,
			"could not be attached (photo.jpg: unsupported"},
		{"an image over 5 MiB", webhook.FileJSON{Name: "big.png", MIME: "image/png", Data: append(slicesClone(pngBytes), make([]byte, 5<<20)...)}, false,
			"over the limit of 5.0 MiB per image"},
		{"a text file", webhook.FileJSON{Name: "notes.txt", MIME: "text/plain", Data: []byte("hello")}, false, "[the user sent a file: inbox/"},
	} {
		p.SendFile(t, gatewaytest.Chat, gatewaytest.Owner, "look: "+tc.name, tc.file)
		s := <-got
		if !strings.Contains(s.text, tc.note) {
			t.Errorf("%s: the model read %q, want %q", tc.name, s.text, tc.note)
		}
		switch {
		case tc.attached && (len(s.images) != 1 || s.images[0].MediaType != "image/png" || !bytes.Equal(s.images[0].Data, tc.file.Data)):
			t.Errorf("%s: images in the message: %+v", tc.name, s.images)
		case !tc.attached && len(s.images) != 0:
			t.Errorf("%s: attached though it should not be", tc.name)
		}
		i := strings.Index(s.text, "inbox/")
		if i < 0 {
			t.Errorf("%s: not kept: %q", tc.name, s.text)
			continue
		}
		rel := strings.Fields(s.text[i:])[0]
		if b, err := os.ReadFile(filepath.Join(e.Dir, rel)); err != nil || !bytes.Equal(b, tc.file.Data) {
			t.Errorf("%s: the kept file %s: %v", tc.name, rel, err)
		}
	}
}

func slicesClone(b []byte) []byte { return append([]byte(nil), b...) }
