package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	s := mockserver.NewUnstarted()
	s.APIKey, s.ChunkSize = vendorKey, 16
	if result, ok := toolResult(body); ok {
		v.mu.Lock()
		v.results[result]++
		v.mu.Unlock()
		s.Enqueue(replyTurn)
	} else {
		s.Enqueue(v.turn)
	}
	s.Handler().ServeHTTP(w, r)
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

// toolResult reports whether the last message of an Anthropic Messages
// request carries a tool result, and the first line of its text.
func toolResult(body []byte) (string, bool) {
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil || len(req.Messages) == 0 {
		return "", false
	}
	var blocks []struct {
		Type    string          `json:"type"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(req.Messages[len(req.Messages)-1].Content, &blocks) != nil {
		return "", false // a plain string: the user's prompt
	}
	for _, b := range blocks {
		if b.Type == "tool_result" {
			return firstLine(b.Content), true
		}
	}
	return "", false
}

// firstLine is the first line of a tool result's content: a string or a
// list of text blocks.
func firstLine(content json.RawMessage) string {
	var text string
	if json.Unmarshal(content, &text) != nil {
		var blocks []struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(content, &blocks)
		for _, b := range blocks {
			text += b.Text
		}
	}
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	return line
}
