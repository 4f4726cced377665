package runner_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
)

// pngImage is a PNG header padded to look like a file.
var pngImage = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 64)...)

// newVisionHarness is newHarness over a model with or without vision.
func newVisionHarness(t *testing.T, p llm.Provider, vision bool) *harness {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{"HOME": t.TempDir(), "PATH": os.Getenv("PATH"), "REIN_SANDBOX": "off"}
	h := &harness{sessions: session.NewMemStore(), ledger: session.NewMemLedger(), bus: eventbus.NewMemory(eventbus.Options{}), dir: dir}
	svc, err := runner.NewService(runner.ServiceConfig{Sessions: h.sessions, Ledger: h.ledger, Bus: h.bus, DataDir: t.TempDir(),
		Getenv: func(k string) string { return env[k] },
		Resolve: func(_ *registry.Registry, spec string) (*runner.Model, error) {
			return &runner.Model{Provider: p, ProviderName: "scripted", Name: "m", Label: "scripted/m",
				Caps: registry.Model{Name: "m", ContextWindow: 200_000, MaxOutput: 8_000, Vision: vision, ToolResultImages: vision}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	h.svc = svc
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		svc.Shutdown(ctx)
		h.bus.Close()
	})
	h.ws = &session.Workspace{Caller: "alice", Kind: session.WorkspaceProject, Dir: dir}
	if err := h.ledger.CreateWorkspace(context.Background(), h.ws); err != nil {
		t.Fatal(err)
	}
	return h
}

// userImages are the images of the newest user message holding any.
func userImages(msgs []llm.Message) []*llm.Image {
	for i := len(msgs) - 1; i >= 0; i-- {
		var imgs []*llm.Image
		for _, b := range msgs[i].Content {
			if img, ok := b.(*llm.Image); ok && msgs[i].Role == llm.RoleUser {
				imgs = append(imgs, img)
			}
		}
		if len(imgs) > 0 {
			return imgs
		}
	}
	return nil
}

// LOOP-2, API-3: a message with an image reaches the model as an image
// block after its text, is stored in the session log as the user
// message's block, is replayed to the next run, and leaves the run record
// once the run ended.
func TestServiceImages_LOOP2(t *testing.T) {
	p := llmtest.NewScripted(llmtest.Reply{Text: "a red square"}, llmtest.Reply{Text: "still red"})
	h := newVisionHarness(t, p, true)
	s := h.newSession(t)
	ctx := context.Background()
	run, err := h.svc.Submit(ctx, session.Submission{SessionID: s.ID, Caller: "alice", Text: "what is this?",
		Images: []llm.Image{{MediaType: "image/png", Data: pngImage}}})
	if err != nil {
		t.Fatal(err)
	}
	if r := h.wait(t, run.ID); r.Status != session.RunCompleted || len(r.Images) != 0 {
		t.Fatalf("run %s (%s), %d images left in its record", r.Status, r.Error, len(r.Images))
	}
	reqs := p.Requests()
	if len(reqs) != 1 || llmtest.LastUserText(reqs[0]) != "what is this?" {
		t.Fatalf("requests %d", len(reqs))
	}
	if imgs := userImages(reqs[0].Messages); len(imgs) != 1 || !bytes.Equal(imgs[0].Data, pngImage) || imgs[0].MediaType != "image/png" {
		t.Fatalf("the model got images %v", imgs)
	}
	st, err := session.Load(ctx, h.sessions, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if imgs := userImages(st.Messages); len(imgs) != 1 || !bytes.Equal(imgs[0].Data, pngImage) {
		t.Fatalf("the session log holds images %v", imgs)
	}
	run, err = h.svc.Submit(ctx, session.Submission{SessionID: s.ID, Caller: "alice", Text: "and now?"})
	if err != nil {
		t.Fatal(err)
	}
	h.wait(t, run.ID)
	if reqs = p.Requests(); len(reqs) != 2 {
		t.Fatalf("requests %d", len(reqs))
	}
	if imgs := userImages(reqs[1].Messages); len(imgs) != 1 || !bytes.Equal(imgs[0].Data, pngImage) {
		t.Errorf("the next run did not replay the image: %v", imgs)
	}
}

// LOOP-8: a model without vision gets a note in place of the user's
// image; the session still stores the image for a model that can see.
func TestServiceImagesNoVision_LOOP8(t *testing.T) {
	p := llmtest.NewScripted(llmtest.Reply{Text: "I cannot see it"})
	h := newVisionHarness(t, p, false)
	s := h.newSession(t)
	ctx := context.Background()
	run, err := h.svc.Submit(ctx, session.Submission{SessionID: s.ID, Caller: "alice", Text: "what is this?",
		Images: []llm.Image{{MediaType: "image/png", Data: pngImage}}})
	if err != nil {
		t.Fatal(err)
	}
	h.wait(t, run.ID)
	reqs := p.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests %d", len(reqs))
	}
	if imgs := userImages(reqs[0].Messages); len(imgs) != 0 {
		t.Errorf("a model without vision got %d images", len(imgs))
	}
	var user llm.Message
	for _, m := range reqs[0].Messages {
		if m.Role == llm.RoleUser {
			user = m
			break
		}
	}
	if !strings.Contains(user.TextOf(), "[image omitted: the model cannot see images]") {
		t.Errorf("no LOOP-8 note in the user message: %q", user.TextOf())
	}
	st, err := session.Load(ctx, h.sessions, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if imgs := userImages(st.Messages); len(imgs) != 1 {
		t.Errorf("the session log holds %d images, want the one sent", len(imgs))
	}
}

// API-3: a queued run's images live in the run record, so a message
// acknowledged before a crash runs with them when the next process
// recovers the queue.
func TestServiceImagesSurviveRestart_API3(t *testing.T) {
	p := llmtest.NewScripted(llmtest.Reply{Text: "seen"})
	h := newVisionHarness(t, p, true)
	s := h.newSession(t)
	ctx := context.Background()
	run := &session.Run{SessionID: s.ID, Caller: "alice", Images: []llm.Image{{MediaType: "image/png", Data: pngImage}}}
	if err := h.ledger.CreateRun(ctx, run); err != nil { // what a crashed process left queued
		t.Fatal(err)
	}
	if err := h.svc.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if r := h.wait(t, run.ID); r.Status != session.RunCompleted {
		t.Fatalf("run %s: %s", r.Status, r.Error)
	}
	if reqs := p.Requests(); len(reqs) != 1 || len(userImages(reqs[0].Messages)) != 1 {
		t.Fatalf("the recovered run's request lacks the image")
	}
}

// API-4: the service checks images whatever front sent them: each one's
// bytes, its declared type, and the message's count and size.
func TestServiceImagesChecked_API4(t *testing.T) {
	h := newVisionHarness(t, llmtest.NewScripted(), true)
	s := h.newSession(t)
	many := make([]llm.Image, 21)
	for i := range many {
		many[i] = llm.Image{MediaType: "image/png", Data: pngImage}
	}
	for name, imgs := range map[string][]llm.Image{
		"attack: svg":           {{MediaType: "image/svg+xml", Data: []byte("<svg onload='x'/>")}},
		"attack: lying type":    {{MediaType: "image/gif", Data: pngImage}},
		"attack: html as png":   {{MediaType: "image/png", Data: []byte("<html>")}},
		"attack: empty":         {{MediaType: "image/png"}},
		"attack: too many":      many,
		"attack: one too large": {{MediaType: "image/png", Data: append(pngImage, make([]byte, 5<<20)...)}},
	} {
		_, err := h.svc.Submit(context.Background(), session.Submission{SessionID: s.ID, Caller: "alice", Text: "x", Images: imgs})
		if !errors.Is(err, session.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if runs, _ := h.ledger.ListRuns(context.Background(), session.RunFilter{SessionID: s.ID}); len(runs) != 0 {
		t.Errorf("%d runs queued by refused submissions", len(runs))
	}
}
