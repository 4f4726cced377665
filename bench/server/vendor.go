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

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

// vendorKey is the API key the mock vendor requires and rein sends.
const vendorKey = "bench-key"

// The two turns of every run: a read-only tool call, then a text reply.
var (
	toolTurn = mockserver.Turn{Text: "Listing the project.",
		ToolCalls: []mockserver.ToolCall{{ID: "call_1", Name: "list_dir", Input: `{"path":"."}`}},
		Usage:     llm.Usage{InputTokens: 2000, OutputTokens: 20}}
	replyTurn = mockserver.Turn{Text: "The project holds three files.", Usage: llm.Usage{InputTokens: 2100, OutputTokens: 10}}
)

// vendor is the mock vendor (Anthropic wire format) on 127.0.0.1. Runs of
// many sessions call it at once, so one shared script cannot say which
// turn a request gets: each request is answered by a fresh mock server
// holding the one turn its conversation needs — the tool call when the
// last message is the user's prompt, the reply when it holds tool results.
// Nothing is kept between requests.
type vendor struct {
	url string
	srv *http.Server
}

// startVendor serves the mock vendor on a free loopback port.
func startVendor() (*vendor, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	v := &vendor{url: "http://" + ln.Addr().String()}
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
	if answersTools(body) {
		s.Enqueue(replyTurn)
	} else {
		s.Enqueue(toolTurn)
	}
	s.Handler().ServeHTTP(w, r)
}

// answersTools reports whether the last message of an Anthropic Messages
// request carries tool results.
func answersTools(body []byte) bool {
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil || len(req.Messages) == 0 {
		return false
	}
	var blocks []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(req.Messages[len(req.Messages)-1].Content, &blocks) != nil {
		return false // a plain string: the user's prompt
	}
	for _, b := range blocks {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}
