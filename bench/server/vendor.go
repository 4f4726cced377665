package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

// vendorKey is the API key the mock vendor requires and rein sends.
const vendorKey = "bench-key"

// The tools a run's first turn can call (-tool).
const (
	toolListDir = "list_dir" // read-only, in rein's process
	toolBash    = "bash"     // a shell command, under the server's sandbox
)

// bashCommand is the command of -tool bash: a builtin of the shell, so
// what is measured is starting a sandboxed shell, not the command. It
// prints the shell's process id: in the sandbox's own PID namespace
// (bubblewrap's) a small number, outside it the machine's.
const bashCommand = `echo "hi from PID $$"`

// toolTurn is a run's first turn: one call of the tool, then the reply.
func toolTurn(tool string) mockserver.Turn {
	call := mockserver.ToolCall{ID: "call_1", Name: toolListDir, Input: `{"path":"."}`}
	text := "Listing the project."
	if tool == toolBash {
		in, _ := json.Marshal(map[string]string{"command": bashCommand, "description": "greet"})
		call = mockserver.ToolCall{ID: "call_1", Name: toolBash, Input: string(in)}
		text = "Running a command."
	}
	return mockserver.Turn{Text: text, ToolCalls: []mockserver.ToolCall{call}, Usage: llm.Usage{InputTokens: 2000, OutputTokens: 20}}
}

// replyTurn is a run's second turn, after the tool's result.
var replyTurn = mockserver.Turn{Text: "Done.", Usage: llm.Usage{InputTokens: 2100, OutputTokens: 10}}

// vendor is the mock vendor (Anthropic wire format) on 127.0.0.1. Runs of
// many sessions call it at once, so one shared script cannot say which
// turn a request gets: each request is answered by a fresh mock server
// holding the one turn its conversation needs — the tool call when the
// last message is the user's prompt, the reply when it holds tool results.
// Nothing is kept between requests.
type vendor struct {
	url  string
	srv  *http.Server
	turn mockserver.Turn // the first turn of every run

	mu      sync.Mutex
	results map[string]int // the tool results seen, by their first line
}

// startVendor serves the mock vendor on a free loopback port; every run's
// first turn calls tool.
func startVendor(tool string) (*vendor, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	v := &vendor{url: "http://" + ln.Addr().String(), turn: toolTurn(tool), results: map[string]int{}}
	v.srv = &http.Server{Handler: http.HandlerFunc(v.serveHTTP)}
	go func() {
		if err := v.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "bench/server: mock vendor:", err)
			os.Exit(1)
		}
	}()
	return v, nil
}

func (v *vendor) close() { _ = v.srv.Close() }

func (v *vendor) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s := mockserver.NewUnstarted()
	s.APIKey, s.ChunkSize, s.Respond = vendorKey, 16, v.respond
	s.Handler().ServeHTTP(w, r)
}

// respond chooses a request's turn: the reply when its last message holds
// a tool result (counted by its first line), else the tool call. The
// request is decoded once, by the mock server, which rejects a malformed
// one before this is called.
func (v *vendor) respond(req mockserver.Request) mockserver.Turn {
	result, ok := toolResult(req.Decoded)
	if !ok {
		return v.turn
	}
	v.mu.Lock()
	v.results[result]++
	v.mu.Unlock()
	return replyTurn
}

// toolResults returns the tool results seen so far (each result's first
// line, with its count) and forgets them.
func (v *vendor) toolResults() map[string]int {
	v.mu.Lock()
	defer v.mu.Unlock()
	r := v.results
	v.results = map[string]int{}
	return r
}

// toolResult reports whether the last message of a request carries a tool
// result, and the first line of its text.
func toolResult(req *llm.Request) (string, bool) {
	if req == nil || len(req.Messages) == 0 {
		return "", false
	}
	results := req.Messages[len(req.Messages)-1].ToolResults()
	if len(results) == 0 {
		return "", false
	}
	var text strings.Builder
	for _, b := range results[0].Content {
		if t, ok := b.(*llm.Text); ok {
			text.WriteString(t.Text)
		}
	}
	line, _, _ := strings.Cut(strings.TrimSpace(text.String()), "\n")
	return line, true
}
