// Command economy measures rein's token economy on long tasks (SPEC CTX-2,
// CTX-4, CTX-5): it replays three scripted tasks through the real agent loop,
// compactor and tools, with a scripted model and no network, and prints what
// the requests cost.
//
//	go run ./bench/economy [-v] [-window 128000]
//
// The scenarios: 20 read_file calls of 8.5 KB files, 40 bash calls printing
// 25 KB each, 20 bash calls printing 62 KB each; a 200,000-token window
// (-window sets another; 128,000 is rein's default for a model the registry
// does not know) and 16,000 tokens of output reserved. -v lists every cache
// break and writes the compactor's debug log, one "compact: prefix rewrite"
// line per break, to stderr.
//
// The formula. Every request (the task's model calls and the compactor's
// summary calls alike, in the order sent) is cut into segments: the system
// prompt, the tool definitions, then each content block of each message.
// Its prompt tokens are the sum of the segments' estimates (package tokens).
// The cache-read part is the longest run of leading segments identical to
// the previous conversation request's (a prompt cache serves a prefix of
// whole blocks); the rest is uncached (written to the cache or not, it is
// paid in full). Cache-priced tokens = 0.1 × cache-read + 1.0 × uncached,
// summed over the requests. Bytes sent is the sum of the requests' segment
// bytes. A rewrite is a conversation request that keeps fewer leading
// segments than the one before it had; a summary request (the conversation
// up to a cut plus the instruction) is priced but is no rewrite. The
// metering is compact.CacheMeter, which the compactor's tests use too.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/compact"
	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tokens"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/builtin"
)

// scenario is one long task: calls tool calls, each producing size bytes.
type scenario struct {
	name  string
	tool  string // "read_file" or "bash"
	calls int
	size  int
}

var scenarios = []scenario{
	{"20 reads of 8.5 KB", "read_file", 20, 8_700},
	{"40 bash outputs of 25 KB", "bash", 40, 25_600},
	{"20 bash outputs of 62 KB", "bash", 20, 63_500},
}

// result is what one scenario cost: the requests as a prompt cache meters
// them, the summary calls and compactions, and a line per cache break.
type result struct {
	meter                  compact.CacheMeter
	summaries, compactions int
	breaks                 []string
}

func main() {
	verbose := flag.Bool("v", false, "list every cache break and write the compactor's debug log to stderr")
	window := flag.Int("window", 200_000, "the model's context window in tokens (rein's default for a model the registry does not know is 128000)")
	flag.Parse()
	if *window < 20_000 {
		fmt.Fprintln(os.Stderr, "economy: -window must be at least 20000 tokens (the scenarios' system prompt, tools and 16,000 tokens of output must fit)")
		os.Exit(2)
	}
	fmt.Printf("window %d tokens\n", *window)
	fmt.Printf("%-26s %9s %9s %9s %12s %10s %6s %6s %9s\n", "scenario", "requests", "read", "uncached", "cache-priced", "bytes", "summ", "comp", "rewrites")
	for _, s := range scenarios {
		logger := slog.New(slog.DiscardHandler)
		if *verbose {
			logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
		r, err := run(s, *window, logger)
		if err != nil {
			fmt.Fprintln(os.Stderr, s.name+":", err)
			os.Exit(1)
		}
		m := &r.meter
		fmt.Printf("%-26s %9d %9d %9d %11.0fk %9.1fM %6d %6d %9d\n", s.name, m.Requests, m.CacheRead, m.Uncached,
			m.Priced()/1000, float64(m.Bytes)/1e6, r.summaries, r.compactions, len(m.Breaks))
		if *verbose {
			fmt.Println("  cache breaks:", strings.Join(r.breaks, "; "))
		}
	}
}

// content returns size bytes of log-like lines, distinct per file.
func content(file, size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "2026-11-24T10:%02d:%02d file=%d worker=%d processed item %d in %d ms status=ok\n", i/60%60, i%60, file, i%7, i*13+file, (i*37+file)%997)
	}
	return b.String()[:size]
}

// run replays scenario s in a window of that many tokens; the compactor
// logs to logger (its debug lines name every prefix rewrite).
func run(s scenario, window int, logger *slog.Logger) (result, error) {
	dir, err := os.MkdirTemp("", "rein-economy-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	for i := range s.calls {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part%02d.log", i)), []byte(content(i, s.size)), 0o600); err != nil {
			return result{}, err
		}
	}
	backend := &exec.Local{}
	tools, err := tool.NewSet(tool.OriginBuiltin, builtin.NewReadFile(backend, builtin.NewFileTracker()), builtin.NewBash(backend, builtin.BashOptions{}))
	if err != nil {
		return result{}, err
	}
	m := &model{s: s}
	c := compact.New(compact.Config{ContextWindow: window, MaxOutput: 16_000, Provider: m, Logger: logger})
	a := agent.New(agent.Config{Provider: c.Observe(m), ProviderName: "scripted", Model: "m", System: system,
		Tools: tools, MaxTokens: 16_000, MaxTurns: s.calls + 5, Compactor: c, NoRetry: true})
	p := llm.UserText("Go through every part*.log file in this directory one at a time and report what failed.")
	var done *agent.DoneEvent
	for ev, err := range a.Run(context.Background(), agent.Input{SessionID: "economy", RunID: "r1", Prompt: &p, WorkDir: dir, SessionDir: filepath.Join(dir, ".session")}) {
		if err != nil {
			return result{}, err
		}
		switch ev.Type {
		case agent.EventCompaction:
			m.r.compactions++
			m.r.breaks = append(m.r.breaks, fmt.Sprintf("turn %d: compaction %v", ev.Turn, ev.Compaction.Layers))
		case agent.EventDone:
			done = ev.Done
		}
	}
	if done == nil || done.Reason != agent.ReasonCompleted {
		return m.r, fmt.Errorf("the run did not complete: %+v", done)
	}
	return m.r, nil
}

var system = "You are rein, a coding agent. " + strings.Repeat("Follow the user's instructions carefully and use the tools. ", 60)

// model is the scripted model: it asks for the scenario's tool calls one
// turn at a time, then answers; it writes summaries when asked; and it
// meters every request against the one before (compact.CacheMeter).
type model struct {
	s    scenario
	turn int
	r    result
}

func (m *model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
	if br, broke := m.r.meter.Add(req); broke {
		m.r.breaks = append(m.r.breaks, fmt.Sprintf("request %d: prefix broken at segment %d of %d (message %d, block %d)", br.Request, br.Segment, br.Of, br.Message, br.Block))
	}
	in := 0
	for _, s := range compact.Segments(req) {
		in += tokens.Estimate(s)
	}
	var msg llm.Message
	last := req.Messages[len(req.Messages)-1].TextOf()
	switch {
	case strings.HasPrefix(last, compact.SummaryInstruction):
		m.r.summaries++
		msg = text("Goals: report failures in part*.log. Files: " + strings.Repeat("part files read so far, all status=ok. ", 30))
	case m.turn < m.s.calls:
		msg = m.call(m.turn)
		m.turn++
	default:
		msg = text("Every part was read; nothing failed.")
	}
	resp := &llm.Response{Message: msg, StopReason: llm.StopEndTurn, Usage: llm.Usage{InputTokens: int64(in), OutputTokens: 50}}
	if len(msg.ToolUses()) > 0 {
		resp.StopReason = llm.StopToolUse
	}
	return func(yield func(llm.Delta, error) bool) { yield(llm.Delta{Kind: llm.DeltaDone, Response: resp}, nil) }
}

func text(s string) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Provider: "scripted", Model: "m", Content: []llm.Block{&llm.Text{Text: s}}}
}

func (m *model) call(i int) llm.Message {
	file := fmt.Sprintf("part%02d.log", i)
	var in []byte
	if m.s.tool == "bash" {
		in, _ = json.Marshal(map[string]string{"command": "cat " + file})
	} else {
		in, _ = json.Marshal(map[string]any{"path": file})
	}
	return llm.Message{Role: llm.RoleAssistant, Provider: "scripted", Model: "m", Content: []llm.Block{
		&llm.Text{Text: fmt.Sprintf("Reading %s.", file)},
		&llm.ToolUse{ID: fmt.Sprintf("call_%02d", i), Name: m.s.tool, Input: in},
	}}
}
