package gateway_test

import (
	"context"
	"iter"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/gatewaytest"
	"github.com/reinhq/rein/gateway/webhook"
	"github.com/reinhq/rein/gateway/webhook/webhookfake"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// benchEnv is a gateway on the webhook channel with a model that answers
// "ok" at once.
func benchEnv(b *testing.B) (*gatewaytest.Env, *webhookfake.Platform) {
	p := webhookfake.New(b)
	e := gatewaytest.StartWith(b, p, func() gateway.Channel {
		ch, err := webhook.New("hook", webhook.Config{CallbackURL: p.URL()}, func(string) string { return webhookfake.Secret })
		if err != nil {
			b.Fatal(err)
		}
		return ch
	}, gatewaytest.Options{Model: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		return llmtest.NewScripted(llmtest.Reply{Text: "ok"}).Stream(ctx, req)
	}})
	return e, p
}

// answered counts the "ok" replies in chats 0..n-1.
func answered(p *webhookfake.Platform, n int) int {
	total := 0
	for i := range n {
		for _, m := range p.Messages(strconv.Itoa(i)) {
			if strings.HasPrefix(m.Text, "ok") {
				total++
			}
		}
	}
	return total
}

func waitAnswered(b *testing.B, p *webhookfake.Platform, chats, want int) {
	if !gatewaytest.Poll(b, 10*time.Minute, func() bool { return answered(p, chats) >= want }) {
		b.Fatalf("%d of %d messages answered after 10 minutes", answered(p, chats), want)
	}
}

// BenchmarkWebhookMessages: messages a second through the whole way — a
// signed POST to the webhook channel, the inbox, a run of the scripted
// model in the chat's session, the reply posted to the callback — over
// 64 chats.
func BenchmarkWebhookMessages(b *testing.B) {
	const chats = 64
	_, p := benchEnv(b)
	b.ResetTimer()
	for i := range b.N {
		p.Send(b, strconv.Itoa(i%chats), gatewaytest.Owner, "hi")
	}
	waitAnswered(b, p, chats, b.N)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkIdleChats: the memory an idle chat costs. Each of
// REIN_BENCH_CHATS chats (default 10,000) sends one message and gets its
// reply; pool-B/chat is what the gateway's pool holds per idle chat
// (the heap before and after evicting them), heap-B/chat the process's
// heap growth per chat, the in-memory session store and event bus
// included. Run it once: -benchtime 1x.
func BenchmarkIdleChats(b *testing.B) {
	n := 10_000
	if s := benchChats(); s > 0 {
		n = s
	}
	e, p := benchEnv(b)
	base := heapNow()
	b.ResetTimer()
	for i := range n {
		p.Send(b, strconv.Itoa(i), gatewaytest.Owner, "hi")
	}
	waitAnswered(b, p, n, n)
	b.StopTimer()
	g := e.Gateway()
	if g.Chats() != n {
		b.Fatalf("%d chats in the pool, want %d", g.Chats(), n)
	}
	full := heapNow()
	if left := g.Evict(); left != 0 {
		b.Fatalf("%d chats left after eviction", left)
	}
	empty := heapNow()
	b.ReportMetric(float64(full-empty)/float64(n), "pool-B/chat")
	b.ReportMetric(float64(full-base)/float64(n), "heap-B/chat")
	b.ReportMetric(float64(n), "chats")
}

func heapNow() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// benchChats is REIN_BENCH_CHATS, or 0.
func benchChats() int {
	n, _ := strconv.Atoi(strings.TrimSpace(os.Getenv("REIN_BENCH_CHATS")))
	return n
}
