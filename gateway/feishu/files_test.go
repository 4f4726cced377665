package feishu

import (
	"bytes"
	"errors"
	"testing"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/feishu/feishufake"
)

func TestSendFiles(t *testing.T) {
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{1}, 64)...)
	tests := []struct {
		name      string
		msg       gateway.Outgoing
		wantTexts []string             // the messages' texts, in order
		wantTypes []string             // and their msg_types
		wantFiles []gateway.Attachment // the files of the messages after the text
	}{
		{"text and files",
			gateway.Outgoing{ChatID: "5001", Text: "here you are", Files: []gateway.Attachment{
				{Name: "chart.png", MIME: "image/png", Data: png},
				{Name: "notes.txt", MIME: "text/plain", Data: []byte("hello\n")}}},
			[]string{"here you are", "", ""},
			[]string{"interactive", "image", "file"},
			[]gateway.Attachment{{Name: "chart.png", MIME: "image/png", Data: png}, {Name: "notes.txt", MIME: "text/plain; charset=utf-8", Data: []byte("hello\n")}}},
		{"a file alone",
			gateway.Outgoing{ChatID: "5001", Files: []gateway.Attachment{{Name: "report.pdf", MIME: "application/pdf", Data: []byte("%PDF-1.4 fake")}}},
			[]string{""},
			[]string{"file"},
			[]gateway.Attachment{{Name: "report.pdf", MIME: "application/pdf", Data: []byte("%PDF-1.4 fake")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := setup(t)
			ref, err := e.ch.Send(t.Context(), tt.msg)
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			msgs := e.p.Messages("5001")
			if len(msgs) != len(tt.wantTexts) || msgs[0].ID != ref.ID {
				t.Fatalf("the chat holds %d messages (first %s, ref %s); want %d", len(msgs), msgs[0].ID, ref.ID, len(tt.wantTexts))
			}
			var files []gateway.Attachment
			for i, m := range msgs {
				if typ, _, _ := e.p.Content(m.ID); typ != tt.wantTypes[i] {
					t.Errorf("message %d is a %s message; want %s", i, typ, tt.wantTypes[i])
				}
				if m.Text != tt.wantTexts[i] {
					t.Errorf("message %d: text %q; want %q", i, m.Text, tt.wantTexts[i])
				}
				files = append(files, m.Files...)
			}
			if len(files) != len(tt.wantFiles) {
				t.Fatalf("files %d; want %d", len(files), len(tt.wantFiles))
			}
			for i, f := range files {
				w := tt.wantFiles[i]
				if f.Name != w.Name || f.MIME != w.MIME || !bytes.Equal(f.Data, w.Data) {
					t.Errorf("file %d: %s %s %q; want %s %s %q", i, f.Name, f.MIME, f.Data, w.Name, w.MIME, w.Data)
				}
			}
		})
	}
}

// A send whose answer was lost is sent again with the same uuid: Feishu
// answers the message it already posted, and parts already posted are
// not posted again.
func TestSendRetriedOnce(t *testing.T) {
	e := setup(t)
	m := gateway.Outgoing{ChatID: "5001", Text: "the report", Files: []gateway.Attachment{{Name: "r.txt", MIME: "text/plain", Data: []byte("r")}}}
	e.p.LoseAnswers(1)
	_, err := e.ch.Send(t.Context(), m)
	var re *gateway.RetryError
	if !errors.As(err, &re) {
		t.Fatalf("Send with the answer lost: %v; want a RetryError", err)
	}
	ref, err := e.ch.Send(t.Context(), m) // the gateway's retry
	if err != nil {
		t.Fatalf("Send again: %v", err)
	}
	msgs := e.p.Messages("5001")
	if len(msgs) != 2 || msgs[0].ID != ref.ID || msgs[0].Text != "the report" || len(msgs[1].Files) != 1 {
		t.Fatalf("the chat holds %+v; want the card once (ref %s) and the file", msgs, ref.ID)
	}
	// A new message of the same text is a new message.
	if _, err := e.ch.Send(t.Context(), gateway.Outgoing{ChatID: "5001", Text: "the report"}); err != nil {
		t.Fatal(err)
	}
	if n := len(e.p.Messages("5001")); n != 3 {
		t.Errorf("%d messages; want 3", n)
	}
}

// GW-2 (a reply is sent once): a part of a reply whose answer was lost
// when the gateway stopped is sent again by the restarted gateway — a new
// Channel, which kept nothing — with the same uuid, derived from the
// part's Key: Feishu posts it once. Without a Key, a new channel's send
// is a new message.
func TestSendKeyedOnceAcrossRestart(t *testing.T) {
	e := setup(t)
	m := gateway.Outgoing{ChatID: "5001", Text: "the reply", Key: "run_1/0",
		Files: []gateway.Attachment{{Name: "r.txt", MIME: "text/plain", Data: []byte("r")}}}
	e.p.LoseAnswers(1)
	if _, err := e.ch.Send(t.Context(), m); err == nil {
		t.Fatal("Send with the answer lost succeeded; want an error")
	}
	restarted, err := New("feishu", Config{AppID: feishufake.AppID, APIURL: e.p.URL()}, e.p.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := restarted.Send(t.Context(), m)
	if err != nil {
		t.Fatalf("the restarted channel's Send: %v", err)
	}
	msgs := e.p.Messages("5001")
	if len(msgs) != 2 || msgs[0].ID != ref.ID || msgs[0].Text != "the reply" || len(msgs[1].Files) != 1 {
		t.Fatalf("the chat holds %+v; want the card once (ref %s) and the file", msgs, ref.ID)
	}
	m.Key = "run_1/1" // another part of the same text is another message
	if _, err := restarted.Send(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	if n := len(e.p.Messages("5001")); n != 4 {
		t.Errorf("%d messages; want 4 (the second part's card and file)", n)
	}
}
