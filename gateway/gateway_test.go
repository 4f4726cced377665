package gateway_test

import (
	"context"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/gatewaytest"
	"github.com/reinhq/rein/gateway/webhook"
	"github.com/reinhq/rein/gateway/webhook/webhookfake"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/memory"
	"github.com/reinhq/rein/persona"
)

// hook is the webhook channel against its fake: the gateway's own tests
// run over it.
func hook(maxText int) gatewaytest.Setup {
	return func(t *testing.T) (gatewaytest.Platform, func() gateway.Channel) {
		p := webhookfake.New(t)
		return p, func() gateway.Channel {
			ch, err := webhook.New("hook", webhook.Config{CallbackURL: p.URL(), Buttons: true, MaxText: maxText},
				func(string) string { return webhookfake.Secret })
			if err != nil {
				t.Fatal(err)
			}
			return ch
		}
	}
}

// lastUser is the text of the newest user message.
func lastUser(req *llm.Request) string {
	m := req.Messages[len(req.Messages)-1]
	for _, b := range m.Content {
		if t, ok := b.(*llm.Text); ok {
			return t.Text
		}
	}
	return ""
}

// A message sent while the chat's run goes on is queued and answered
// after it, in order; /stop cancels the run (GW-2: session serial).
func TestQueuedAndStop(t *testing.T) {
	release := make(chan struct{})
	e := gatewaytest.Start(t, hook(0), gatewaytest.Options{Model: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		text := lastUser(req)
		if text == "hang" {
			return llmtest.NewScripted(llmtest.Reply{Text: "thinking…", Hang: true}).Stream(ctx, req)
		}
		if text == "slow" {
			<-release
		}
		return llmtest.NewScripted(llmtest.Reply{Text: "re: " + text}).Stream(ctx, req)
	}})
	e.P.Send(t, gatewaytest.Chat, gatewaytest.Owner, "slow")
	e.P.Send(t, gatewaytest.Chat, gatewaytest.Owner, "second")
	e.WaitText(t, gatewaytest.Chat, "⏳ Queued")
	close(release)
	e.WaitText(t, gatewaytest.Chat, "re: second")
	msgs := e.P.Messages(gatewaytest.Chat)
	first, second := -1, -1
	for i, m := range msgs {
		if strings.Contains(m.Text, "re: slow") {
			first = i
		}
		if strings.Contains(m.Text, "re: second") {
			second = i
		}
	}
	if first < 0 || second < first {
		t.Fatalf("the replies are not in the messages' order: %+v", msgs)
	}

	e.P.Send(t, gatewaytest.Chat, gatewaytest.Owner, "hang")
	e.WaitText(t, gatewaytest.Chat, "thinking…") // the run is going
	e.P.Send(t, gatewaytest.Chat, gatewaytest.Owner, "/stop")
	e.WaitText(t, gatewaytest.Chat, "⏹ Stopped.")
	e.P.Send(t, gatewaytest.Chat, gatewaytest.Owner, "/stop")
	e.WaitText(t, gatewaytest.Chat, "Nothing is running.")
}

// /new starts a new session; /model changes the chat's model; /cost
// adds up the conversation; /help lists the commands (GW-2).
func TestCommands(t *testing.T) {
	e := gatewaytest.Start(t, hook(0), gatewaytest.Options{})
	chat, me := gatewaytest.Chat, gatewaytest.Owner
	e.P.Send(t, chat, me, "one")
	e.WaitText(t, chat, "echo: one (0 messages before)")
	e.P.Send(t, chat, me, "two")
	e.WaitText(t, chat, "echo: two (2 messages before)")
	e.P.Send(t, chat, me, "/cost")
	e.WaitText(t, chat, "This conversation: 2 replies")
	e.P.Send(t, chat, me, "/new")
	e.WaitText(t, chat, "New conversation.")
	e.P.Send(t, chat, me, "three")
	e.WaitText(t, chat, "echo: three (0 messages before)")
	e.P.Send(t, chat, me, "/model openai/gpt-5-mini")
	e.WaitText(t, chat, "Model for this chat: openai/gpt-5-mini")
	e.P.Send(t, chat, me, "four")
	e.WaitText(t, chat, "echo: four")
	if ms := e.Models(); ms[len(ms)-1] != "openai/gpt-5-mini" {
		t.Errorf("the run after /model resolved %q", ms[len(ms)-1])
	}
	e.P.Send(t, chat, me, "/model")
	e.WaitText(t, chat, "Model: openai/gpt-5-mini.")
	e.P.Send(t, chat, me, "/model two words")
	e.WaitText(t, chat, "is not a model")
	e.P.Send(t, chat, me, "/help")
	e.WaitText(t, chat, "/new — start a new conversation")
	e.P.Send(t, chat, me, "/memory")
	e.WaitText(t, chat, "Memory is off for this gateway.")
	// A path is a message, not a command.
	e.P.Send(t, chat, me, "/etc/hosts is broken")
	e.WaitText(t, chat, "echo: /etc/hosts is broken")
}

// A reply the platform would not take before a stop is sent after the
// restart, once; a chat's next message continues its session.
func TestRestartDeliversPendingReply(t *testing.T) {
	e := gatewaytest.Start(t, hook(0), gatewaytest.Options{})
	e.P.Throttle(1_000_000, 0) // the platform is away
	e.P.Send(t, gatewaytest.Chat, gatewaytest.Owner, "are you there")
	gatewaytest.Eventually(t, 30*time.Second, "the run to go and its reply to be throttled",
		func() bool { return e.Calls() > 0 && e.P.Throttled() >= 3 })
	e.Restart(t)
	e.P.Throttle(0, 0) // back
	e.WaitText(t, gatewaytest.Chat, "echo: are you there")
	e.P.Send(t, gatewaytest.Chat, gatewaytest.Owner, "again")
	e.WaitText(t, gatewaytest.Chat, "echo: again (2 messages before)")
	if n := e.Count(gatewaytest.Chat, "echo: are you there"); n != 1 {
		t.Errorf("the pending reply was sent %d times", n)
	}
}

// A long reply is split at the platform's size, on line boundaries.
func TestLongReplySplit(t *testing.T) {
	long := strings.Repeat("a line of the reply\n", 30) // 600 runes
	e := gatewaytest.Start(t, hook(200), gatewaytest.Options{Model: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		return llmtest.NewScripted(llmtest.Reply{Text: long}).Stream(ctx, req)
	}})
	e.P.Send(t, gatewaytest.Chat, gatewaytest.Owner, "tell me a lot")
	var n int
	if !gatewaytest.Poll(t, 30*time.Second, func() bool {
		var got strings.Builder
		n = 0
		for _, m := range e.P.Messages(gatewaytest.Chat) {
			if len([]rune(m.Text)) > 200 {
				t.Fatalf("a message of %d runes; the limit is 200", len([]rune(m.Text)))
			}
			if strings.HasPrefix(m.Text, "a line") {
				got.WriteString(m.Text + "\n")
				n++
			}
		}
		return got.String() == long
	}) {
		t.Fatalf("the parts do not add up to the reply: %+v", e.P.Messages(gatewaytest.Chat))
	}
	if n < 3 {
		t.Errorf("%d parts", n)
	}
}

// A file the user sends is kept under the workspace's inbox/ and named to
// the model.
func TestAttachmentKept(t *testing.T) {
	seen := make(chan string, 1)
	e := gatewaytest.Start(t, hook(0), gatewaytest.Options{Model: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		seen <- lastUser(req)
		return llmtest.NewScripted(llmtest.Reply{Text: "got it"}).Stream(ctx, req)
	}})
	p := e.P.(*webhookfake.Platform)
	p.SendFile(t, gatewaytest.Chat, gatewaytest.Owner, "look at this", webhook.FileJSON{Name: "../../etc/cat pic.png", MIME: "image/png", Data: []byte("\x89PNG")})
	text := <-seen
	i := strings.Index(text, "inbox/")
	if i < 0 {
		t.Fatalf("the model was not told where the file is: %q", text)
	}
	rel := strings.Fields(text[i:])[0]
	b, err := os.ReadFile(filepath.Join(e.Dir, rel))
	if err != nil || string(b) != "\x89PNG" {
		t.Fatalf("the file at %s: %q, %v", rel, b, err)
	}
	if !strings.HasSuffix(rel, "cat_pic.png") || strings.Contains(rel, "..") {
		t.Errorf("the kept name %q is not sanitised", rel)
	}
}

// GW-1: while the persona has no name, the first allowed user is asked
// the bootstrap's questions; the answers become the persona, which the
// next run's system prompt carries.
func TestPersonaBootstrap(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "persona")
	store := memory.New(memory.Config{UserDir: filepath.Join(home, "memory")})
	e := gatewaytest.Start(t, hook(0), gatewaytest.Options{Home: home, Configure: func(c *gateway.Config) {
		c.PersonaDir, c.Memory = dir, store
	}})
	chat, me := gatewaytest.Chat, gatewaytest.Owner
	e.P.Send(t, chat, me, "hi")
	e.WaitText(t, chat, "a few questions")
	for i := 0; i < 10; i++ {
		p, _ := persona.Load(dir)
		if p.Bootstrapped() {
			break
		}
		before := len(e.P.Messages(chat))
		answer := "skip"
		if i == 0 {
			answer = "Juniper"
		} else if i < 3 {
			answer = "Sam"
		}
		e.P.Send(t, chat, me, answer)
		gatewaytest.Eventually(t, 10*time.Second, "the bootstrap's next question",
			func() bool { return len(e.P.Messages(chat)) > before })
	}
	e.WaitText(t, chat, "I'm Juniper from now on")
	if p, err := persona.Load(dir); err != nil || p.Identity.Name != "Juniper" {
		t.Fatalf("persona: %+v, %v", p, err)
	}
	e.P.Send(t, chat, me, "/memory")
	e.WaitText(t, chat, "About you")
	if e.Calls() != 0 {
		t.Errorf("the bootstrap reached the model %d times", e.Calls())
	}
}

// Idle chats leave the pool and come back from the stores.
func TestIdleChatsEvicted(t *testing.T) {
	e := gatewaytest.Start(t, hook(0), gatewaytest.Options{})
	e.P.Send(t, gatewaytest.Chat, gatewaytest.Owner, "one")
	e.WaitText(t, gatewaytest.Chat, "echo: one")
	g := e.Gateway()
	gatewaytest.Eventually(t, 10*time.Second, "the idle chat to leave the pool", func() bool { return g.Evict() == 0 })
	e.P.Send(t, gatewaytest.Chat, gatewaytest.Owner, "two")
	e.WaitText(t, gatewaytest.Chat, "echo: two (2 messages before)")
}

// PERM-3: a question nobody answers is denied at the timeout, and its
// buttons go.
func TestApprovalTimeout(t *testing.T) {
	e := gatewaytest.Start(t, hook(0), gatewaytest.Options{Env: map[string]string{"REIN_ASK_TIMEOUT": "1s"}})
	e.P.Send(t, gatewaytest.Chat, gatewaytest.Owner, "please write a file")
	e.WaitText(t, gatewaytest.Chat, "🔐 Allow write_file")
	q := e.WaitText(t, gatewaytest.Chat, "⛔ Denied (timeout)")
	if len(q.Buttons) != 0 {
		t.Errorf("the settled question keeps its buttons: %+v", q.Buttons)
	}
	if _, err := os.Stat(filepath.Join(e.Dir, "out.txt")); err == nil {
		t.Error("the file was written without an answer")
	}
	e.P.Press(t, gateway.MessageRef{ChatID: gatewaytest.Chat, ID: q.ID}, gatewaytest.Owner, "perm:0000:once")
	e.WaitText(t, gatewaytest.Chat, "already answered or has expired")
}

// A reply of more than three parts goes as its first part and the whole
// as reply.md.
func TestVeryLongReplyAsFile(t *testing.T) {
	long := strings.Repeat("a line of the reply\n", 50) // 1,000 runes: five parts of 200
	e := gatewaytest.Start(t, hook(200), gatewaytest.Options{Model: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		return llmtest.NewScripted(llmtest.Reply{Text: long}).Stream(ctx, req)
	}})
	e.P.Send(t, gatewaytest.Chat, gatewaytest.Owner, "tell me everything")
	var msgs []gatewaytest.Message
	if !gatewaytest.Poll(t, 30*time.Second, func() bool {
		msgs = e.P.Messages(gatewaytest.Chat)
		return len(msgs) > 0 && len(msgs[len(msgs)-1].Files) == 1
	}) {
		t.Fatalf("no reply.md: %+v", msgs)
	}
	n := len(msgs)
	f := msgs[n-1].Files[0]
	if f.Name != "reply.md" || strings.TrimSpace(string(f.Data)) != strings.TrimSpace(long) {
		t.Fatalf("the file: %s, %d bytes", f.Name, len(f.Data))
	}
	if n != 2 || !strings.HasPrefix(msgs[0].Text, "a line") {
		t.Errorf("want the first part, then the file: %+v", msgs)
	}
}

// PERM-3: a question is answered only in its own chat: an allowed user
// typing its token in another chat answers nothing.
func TestApprovalOnlyInItsChat(t *testing.T) {
	e := gatewaytest.Start(t, hook(0), gatewaytest.Options{})
	e.P.Send(t, gatewaytest.Chat, gatewaytest.Owner, "please write a file")
	q := e.WaitText(t, gatewaytest.Chat, "🔐 Allow write_file")
	token := strings.Split(q.Buttons[0].Data, ":")[1]
	e.P.Send(t, gatewaytest.Chat2, gatewaytest.Owner, "/approve "+token)
	e.WaitText(t, gatewaytest.Chat2, "already answered or has expired")
	if _, err := os.Stat(filepath.Join(e.Dir, "out.txt")); err == nil {
		t.Fatal("a token typed in another chat answered the question")
	}
	e.P.Press(t, gateway.MessageRef{ChatID: gatewaytest.Chat, ID: q.ID}, gatewaytest.Owner, q.Buttons[2].Data) // deny
	e.WaitText(t, gatewaytest.Chat, "⛔ Denied by")
}

// A message's text is cut at 32 KiB before it reaches the model.
func TestLongMessageCut(t *testing.T) {
	seen := make(chan string, 1)
	e := gatewaytest.Start(t, hook(0), gatewaytest.Options{Model: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		seen <- lastUser(req)
		return llmtest.NewScripted(llmtest.Reply{Text: "ok"}).Stream(ctx, req)
	}})
	e.P.Send(t, gatewaytest.Chat, gatewaytest.Owner, strings.Repeat("x", 40<<10))
	got := <-seen
	if len(got) > 33<<10 || !strings.HasSuffix(got, "[message cut at 32 KiB]") {
		t.Errorf("the model got %d bytes ending %q", len(got), got[max(0, len(got)-40):])
	}
}
