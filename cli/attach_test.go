package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

var (
	testPNG = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{1}, 48)...)
	testGIF = append([]byte("GIF89a"), bytes.Repeat([]byte{2}, 48)...)
)

// imageEnv is a workspace with a GIF to mention and a PNG outside it to
// attach with --image, and a profile of the mock vendor.
func imageEnv(t *testing.T, provider, base string) (*testEnv, string) {
	te := newTestEnv(t)
	te.write("shots/pic.gif", string(testGIF))
	png := filepath.Join(te.home, "Desktop", "shot.png")
	te.env["MOCK_KEY"] = "k"
	te.mustRun(ExitOK, "provider", "add", "mock", "--provider", provider, "--base-url", base, "--api-key-env", "MOCK_KEY")
	te.write("../home/Desktop/shot.png", string(testPNG))
	return te, png
}

// LOOP-2, CLI-1: --image and an @mention reach the Anthropic request as
// base64 image blocks after the text, and a resumed session replays them.
func TestRunImagesAnthropic_LOOP2(t *testing.T) {
	srv := mockserver.New()
	defer srv.Close()
	srv.APIKey = "k"
	srv.Enqueue(mockserver.Turn{Text: "a gif and a png"}, mockserver.Turn{Text: "still"})
	te, png := imageEnv(t, "anthropic", srv.URL)
	te.mustRun(ExitOK, "run", "--model", "mock/claude-sonnet-4-5", "--image", png, "compare @shots/pic.gif with the other")
	te.mustRun(ExitOK, "run", "--continue", "and now?")
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		var body struct {
			Messages []struct {
				Role    string `json:"role"`
				Content []struct {
					Type   string `json:"type"`
					Text   string `json:"text"`
					Source *struct {
						Type      string `json:"type"`
						MediaType string `json:"media_type"`
						Data      string `json:"data"`
					} `json:"source"`
				} `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, b := range body.Messages[0].Content {
			switch {
			case b.Type == "text":
				got = append(got, "text:"+b.Text)
			case b.Type == "image" && b.Source != nil:
				got = append(got, "image:"+b.Source.Type+":"+b.Source.MediaType+":"+b.Source.Data)
			}
		}
		want := []string{"text:compare @shots/pic.gif with the other",
			"image:base64:image/gif:" + base64.StdEncoding.EncodeToString(testGIF),
			"image:base64:image/png:" + base64.StdEncoding.EncodeToString(testPNG)}
		if body.Messages[0].Role != "user" || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("request %d: first message %s:\n%s", i+1, body.Messages[0].Role, strings.Join(got, "\n"))
		}
	}
}

// LOOP-2: the same message in OpenAI's wire format (data URLs).
func TestRunImagesOpenAI_LOOP2(t *testing.T) {
	srv := mockserver.New()
	defer srv.Close()
	srv.APIKey = "k"
	srv.Enqueue(mockserver.Turn{Text: "seen"})
	te, png := imageEnv(t, "openai", srv.URL+"/v1")
	te.mustRun(ExitOK, "run", "--model", "mock/gpt-4.1", "--image", png, "what is @shots/pic.gif?")
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	body := string(reqs[0].Body)
	for _, want := range []string{"data:image/gif;base64," + base64.StdEncoding.EncodeToString(testGIF),
		"data:image/png;base64," + base64.StdEncoding.EncodeToString(testPNG)} {
		if !strings.Contains(body, want) {
			t.Errorf("request lacks %s:\n%.2000s", want, body)
		}
	}
	if d := reqs[0].Decoded; d == nil || len(userImagesOf(d.Messages)) != 2 {
		t.Errorf("the mock vendor decoded no two images (%v)", reqs[0].DecodeErr)
	}
}

// LOOP-8: a model without vision gets the note, not the bytes.
func TestRunImagesNoVision_LOOP8(t *testing.T) {
	srv := mockserver.New()
	defer srv.Close()
	srv.APIKey = "k"
	srv.Enqueue(mockserver.Turn{Text: "I cannot see"})
	te, png := imageEnv(t, "anthropic", srv.URL)
	_, errs := te.mustRun(ExitOK, "run", "--model", "mock/some-text-model", "--image", png, "what is this?")
	if !strings.Contains(errs, "mock/some-text-model cannot see images: it gets a note in place of the 1 attached") {
		t.Errorf("no warning on stderr: %s", errs)
	}
	srv.Enqueue(mockserver.Turn{Text: "still blind"})
	out, _ := te.mustRun(ExitOK, "run", "--model", "mock/some-text-model", "--image", png, "-o", "stream-json", "and this?")
	if !strings.Contains(out, "the model cannot see images: the 1 image(s) of this message reach it as a note") {
		t.Errorf("the start event has no warning:\n%.600s", out)
	}
	body := string(srv.Requests()[0].Body)
	if strings.Contains(body, base64.StdEncoding.EncodeToString(testPNG)) || !strings.Contains(body, "[image omitted: the model cannot see images]") {
		t.Errorf("request to a model without vision:\n%.2000s", body)
	}
}

// CLI-1: the attack table of attachments: each is refused before any
// request, saying what is wrong.
func TestRunImageAttacks(t *testing.T) {
	srv := mockserver.New()
	defer srv.Close()
	srv.APIKey = "k"
	te, png := imageEnv(t, "anthropic", srv.URL)
	te.write(".env.png", string(testPNG))
	te.write("notes.png", "just text\n")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"look at @" + png}, "outside the workspace"},
		{[]string{"look at @../home/Desktop/shot.png"}, "outside the workspace"},
		{[]string{"look at @.env.png"}, "sensitive file"},
		{[]string{"look at @notes.png"}, "not a PNG, JPEG, GIF or WebP"},
		{[]string{"look at @missing.png"}, "no such file"},
		{[]string{"--image", filepath.Join(te.ws, "notes.png"), "look"}, "not a PNG, JPEG, GIF or WebP"},
		{[]string{"--image", filepath.Join(te.ws, ".env.png"), "look"}, "sensitive file"},
		{[]string{"--image", filepath.Join(te.ws, "nope.png"), "look"}, "no such file"},
	} {
		code, _, errs := te.run(append([]string{"run", "--model", "mock/claude-sonnet-4-5"}, tt.args...)...)
		if code != ExitUsage || !strings.Contains(errs, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tt.args, code, errs, ExitUsage, tt.want)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent for refused attachments", n)
	}
	// A mention of a file that is no image is text, as written.
	srv.Enqueue(mockserver.Turn{Text: "ok"})
	te.write("main.go", "package main\n")
	te.mustRun(ExitOK, "run", "--model", "mock/claude-sonnet-4-5", "explain @main.go")
	if body := string(srv.Requests()[0].Body); strings.Contains(body, "package main") || !strings.Contains(body, "explain @main.go") {
		t.Errorf("a text mention changed the prompt:\n%.1000s", body)
	}
}

// userImagesOf counts the image blocks of user messages.
func userImagesOf(msgs []llm.Message) []*llm.Image {
	var out []*llm.Image
	for _, m := range msgs {
		for _, b := range m.Content {
			if img, ok := b.(*llm.Image); ok && m.Role == llm.RoleUser {
				out = append(out, img)
			}
		}
	}
	return out
}

// API-1, LOOP-2: rein run --server --image posts the image in the
// message; the server's run (SQLite ledger, runner) sends it to the
// vendor, and the session's next run replays it.
func TestRunImagesOnServer_LOOP2(t *testing.T) {
	srv := mockserver.New()
	defer srv.Close()
	srv.APIKey = "k"
	srv.Enqueue(mockserver.Turn{Text: "a png"}, mockserver.Turn{Text: "still a png"})
	te, png := imageEnv(t, "anthropic", srv.URL)
	url := serveFor(t, te)
	te.mustRun(ExitOK, "run", "--server", url, "--model", "mock/claude-sonnet-4-5", "--image", png, "what is this?")
	te.mustRun(ExitOK, "run", "--server", url, "--model", "mock/claude-sonnet-4-5", "--continue", "and now?")
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		imgs := userImagesOf(r.Decoded.Messages)
		if len(imgs) != 1 || !bytes.Equal(imgs[0].Data, testPNG) || imgs[0].MediaType != "image/png" {
			t.Errorf("request %d: images %v", i+1, imgs)
		}
	}
	if code, _, errs := te.run("run", "--server", url, "--model", "mock/claude-sonnet-4-5", "--image", filepath.Join(te.home, "none.png"), "x"); code != ExitUsage || !strings.Contains(errs, "no such file") {
		t.Errorf("a missing --image file: exit %d, %s", code, errs)
	}
}

// CLI-2: the terminal UI takes images by drop or paste, not --image.
func TestInteractiveImageFlag(t *testing.T) {
	te := newTestEnv(t)
	te.tty = true
	code, _, errs := te.run("--image", "x.png")
	if code != ExitUsage || !strings.Contains(errs, "drop or paste the image file") {
		t.Errorf("exit %d, %s", code, errs)
	}
}

// LOOP-2, SESS-2: an image near the 5 MiB bound is stored in the session
// file as one entry and replayed whole when the session continues.
func TestRunLargeImageResumes(t *testing.T) {
	srv := mockserver.New()
	defer srv.Close()
	srv.APIKey = "k"
	srv.Enqueue(mockserver.Turn{Text: "big"}, mockserver.Turn{Text: "still big"})
	te, _ := imageEnv(t, "anthropic", srv.URL)
	big := append(append([]byte(nil), testPNG...), bytes.Repeat([]byte{9}, 5<<20-len(testPNG)-1)...)
	p := te.write("big.png", string(big))
	te.mustRun(ExitOK, "run", "--model", "mock/claude-sonnet-4-5", "--image", p, "how big?")
	te.mustRun(ExitOK, "run", "--continue", "and now?")
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if imgs := userImagesOf(reqs[1].Decoded.Messages); len(imgs) != 1 || !bytes.Equal(imgs[0].Data, big) {
		t.Errorf("the resumed run replayed %d images", len(imgs))
	}
	too := te.write("too.png", string(append(big, 0, 0)))
	if code, _, errs := te.run("run", "--model", "mock/claude-sonnet-4-5", "--image", too, "x"); code != ExitUsage || !strings.Contains(errs, "over the limit of 5.0 MiB per image") {
		t.Errorf("a 5 MiB + 1 image: exit %d, %s", code, errs)
	}
}

// CLI-5, LOOP-2: a dry run builds the message as a run does: its images
// count in the request's size, and a bad attachment is refused the same
// way; no request reaches the vendor.
func TestDryRunImages_CLI5(t *testing.T) {
	srv := mockserver.New()
	defer srv.Close()
	srv.APIKey = "k"
	te, png := imageEnv(t, "anthropic", srv.URL)
	plain, _ := dryJSON(t, te, ExitOK, "--model", "mock/claude-sonnet-4-5", "what is this?")
	with, _ := dryJSON(t, te, ExitOK, "--model", "mock/claude-sonnet-4-5", "--image", png, "what is this?")
	if with.Tokens.Messages <= plain.Tokens.Messages {
		t.Errorf("message tokens with an image %d, without %d: the image is not counted", with.Tokens.Messages, plain.Tokens.Messages)
	}
	te.write("notes.png", "text\n")
	if code, _, errs := te.run("run", "--dry-run", "--model", "mock/claude-sonnet-4-5", "see @notes.png"); code != ExitUsage || !strings.Contains(errs, "not a PNG, JPEG, GIF or WebP") {
		t.Errorf("a bad mention in a dry run: exit %d, %s", code, errs)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the dry runs sent %d requests", n)
	}
}

// CLI-2, LOOP-2: the terminal UI's backend sends a dropped file and a
// mention as images; a bad attachment ends the run at once with the
// error, and the model is not called.
func TestInteractiveBackendImages(t *testing.T) {
	te := newTestEnv(t)
	te.write("pic.gif", string(testGIF))
	png := te.write("../home/shot.png", string(testPNG))
	var script func(ctx context.Context, b tui.Backend)
	s := te.script("m", llmtest.Reply{Text: "two images"})
	te.tty = true
	te.customize = func(a *App) {
		models := a.Models
		a.Models = func(spec string) (Model, bool, error) { // a model with vision
			m, ok, err := models(spec)
			m.Caps.Vision = true
			return m, ok, err
		}
		a.Interactive = func(ctx context.Context, opts tui.Options) error {
			script(ctx, opts.Backend)
			return nil
		}
	}
	script = func(ctx context.Context, b tui.Backend) {
		for _, err := range b.Submit(ctx, tui.Prompt{Text: "see @missing.png"}, nil) {
			if err == nil || !strings.Contains(err.Error(), "no such file") {
				t.Errorf("a missing mention: %v", err)
			}
		}
		for _, err := range b.Submit(ctx, tui.Prompt{Text: "compare [Image #1] with @pic.gif", Images: []string{png}}, nil) {
			if err != nil {
				t.Errorf("run: %v", err)
			}
		}
	}
	te.mustRun(ExitOK, "--model", "scripted/m")
	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	imgs := userImagesOf(reqs[0].Messages)
	if len(imgs) != 2 || !bytes.Equal(imgs[0].Data, testGIF) || !bytes.Equal(imgs[1].Data, testPNG) {
		t.Errorf("images %d", len(imgs))
	}
}
