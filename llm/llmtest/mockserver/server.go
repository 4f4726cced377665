package mockserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/llm"
)

// Vendor names a wire format.
type Vendor string

// The wire formats the server speaks.
const (
	Anthropic       Vendor = "anthropic"
	OpenAIChat      Vendor = "openai-chat"
	OpenAIResponses Vendor = "openai-responses"
	Gemini          Vendor = "gemini"
)

// Turn is one scripted reply, in vendor-neutral terms. The server renders it in
// the wire format of whichever vendor asks.
type Turn struct {
	// Thinking is visible reasoning, sent before the text.
	Thinking string `json:"thinking,omitempty"`
	// ThinkingSignature is the opaque signature of the reasoning (Anthropic
	// signature, Responses encrypted_content, Gemini thoughtSignature).
	ThinkingSignature string `json:"thinking_signature,omitempty"`
	// Text is the reply text.
	Text string `json:"text,omitempty"`
	// ToolCalls are the tool calls, in declaration order.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// StopReason defaults to tool_use when there are tool calls, else end_turn.
	StopReason llm.StopReason `json:"stop_reason,omitempty"`
	// Usage is reported as the vendor reports it; zero fields are omitted.
	Usage llm.Usage `json:"usage"`
	// Fault, when set, replaces or breaks the reply.
	Fault *Fault `json:"fault,omitempty"`
}

// ToolCall is one scripted tool call.
type ToolCall struct {
	// ID defaults to "call_<n>"; Gemini, which has no call ids on the wire,
	// ignores it.
	ID    string `json:"id,omitempty"`
	Name  string `json:"name"`
	Input string `json:"input"` // a JSON object
}

// Fault breaks a reply on purpose.
type Fault struct {
	// Status, when non-zero, answers with this HTTP status and the vendor's
	// error body instead of a reply.
	Status int `json:"status,omitempty"`
	// Message is the error message put in the body; a default is used when empty.
	Message string `json:"message,omitempty"`
	// RetryAfter is sent as the Retry-After header (seconds or an HTTP-date).
	RetryAfter string `json:"retry_after,omitempty"`
	// RetryAfterMS is sent as the retry-after-ms header.
	RetryAfterMS string `json:"retry_after_ms,omitempty"`
	// RetryDelay is put in a Gemini RetryInfo detail of the error body ("7s").
	RetryDelay string `json:"retry_delay,omitempty"`
	// ContextOverflow answers 400 with the vendor's context-length error.
	ContextOverflow bool `json:"context_overflow,omitempty"`
	// ResetBeforeFirstByte closes the connection with a TCP reset before any
	// response byte.
	ResetBeforeFirstByte bool `json:"reset_before_first_byte,omitempty"`
	// ResetAfterEvents resets the connection after this many stream events.
	ResetAfterEvents int `json:"reset_after_events,omitempty"`
	// CutBeforeFinal ends the stream cleanly but without its final event(s).
	CutBeforeFinal bool `json:"cut_before_final,omitempty"`
	// Malformed writes a data line that is not JSON after the first event.
	Malformed bool `json:"malformed,omitempty"`
	// EventDelay sleeps before every stream event: a slow stream.
	EventDelay time.Duration `json:"event_delay,omitempty"`
	// BOM starts the reply body, stream or plain, with a UTF-8 byte-order
	// mark, as some servers and proxies do. The reply must still be read
	// whole (SPEC PROV-2).
	BOM bool `json:"bom,omitempty"`
	// KeepAlive sends an event with empty data, as proxies do to keep a
	// connection open, before every stream event; it must be skipped.
	KeepAlive bool `json:"keep_alive,omitempty"`
}

// Request is one logged request.
type Request struct {
	Vendor Vendor
	Method string
	Path   string
	Header http.Header
	// Body is the raw request body.
	Body []byte
	// Stream reports whether a streamed reply was asked for.
	Stream bool
	// Decoded is the request in rein's message model; nil when the body did not
	// decode (DecodeErr says why).
	Decoded   *llm.Request
	DecodeErr error
}

// Server is a running mock vendor server. Its methods are safe for concurrent use.
type Server struct {
	// URL is the server's base URL, e.g. "http://127.0.0.1:41234".
	URL string
	// APIKey, when set, is required on every request (x-api-key, Bearer token,
	// x-goog-api-key or ?key=); a missing or different key gets a 401.
	APIKey string
	// ChunkSize is the number of characters per streamed text or argument
	// chunk; 0 means 4.
	ChunkSize int
	// Loop plays the script again from its start when it runs out, instead
	// of failing (for benchmarks and long-running use).
	Loop bool
	// Respond, when set, chooses each request's turn from the request as
	// decoded (Request.Decoded, never nil here) instead of taking the
	// script's next: a server answering many conversations at once, as a
	// benchmark's does. A request that did not decode is answered 400
	// before Respond is called.
	Respond func(Request) Turn

	ts       *httptest.Server
	mu       sync.Mutex
	script   []Turn
	requests []Request
}

// New starts a server on 127.0.0.1. Close it when done.
func New() *Server {
	s := &Server{}
	s.ts = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.ts.URL
	return s
}

// NewUnstarted returns a server that Handler can serve from any listener.
func NewUnstarted() *Server { return &Server{} }

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// Close stops the server and closes its connections.
func (s *Server) Close() {
	if s.ts != nil {
		s.ts.CloseClientConnections()
		s.ts.Close()
	}
}

// Enqueue appends turns to the script. Each model request takes the next turn.
func (s *Server) Enqueue(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, turns...)
}

// Pending returns how many scripted turns are left.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// Requests returns the model requests received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Reset forgets the script and the request log.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script, s.requests = nil, nil
}

func (s *Server) next() (Turn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.script) == 0 {
		return Turn{}, false
	}
	t := s.script[0]
	s.script = s.script[1:]
	if s.Loop {
		s.script = append(s.script, t)
	}
	return t, true
}

// turnFor is the turn that answers req: Respond's when set, else the
// script's next.
func (s *Server) turnFor(req Request) (Turn, bool) {
	if s.Respond != nil {
		return s.Respond(req), true
	}
	return s.next()
}

func (s *Server) chunkSize() int {
	if s.ChunkSize > 0 {
		return s.ChunkSize
	}
	return 4
}

// vendorOf routes a request to its wire format; model is set for Gemini, whose
// model travels in the path.
func vendorOf(r *http.Request) (v Vendor, model string, stream bool, ok bool) {
	p := r.URL.Path
	switch {
	case strings.HasSuffix(p, "/messages") && r.Method == http.MethodPost:
		return Anthropic, "", false, true
	case strings.HasSuffix(p, "/chat/completions"):
		return OpenAIChat, "", false, true
	case strings.HasSuffix(p, "/responses"):
		return OpenAIResponses, "", false, true
	case strings.Contains(p, "/models/") && strings.HasSuffix(p, ":streamGenerateContent"):
		return Gemini, geminiModel(p), true, true
	case strings.Contains(p, "/models/") && strings.HasSuffix(p, ":generateContent"):
		return Gemini, geminiModel(p), false, true
	}
	return "", "", false, false
}

func geminiModel(p string) string {
	m := p[strings.Index(p, "/models/")+len("/models/"):]
	if i := strings.IndexByte(m, ':'); i >= 0 {
		m = m[:i]
	}
	return m
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if s.ServeEmbedding(w, r) {
		return
	}
	if r.Method == http.MethodGet && (strings.HasSuffix(r.URL.Path, "/models")) {
		s.serveModels(w, r)
		return
	}
	v, model, stream, ok := vendorOf(r)
	if !ok {
		http.Error(w, fmt.Sprintf("mockserver: no vendor serves %s %s", r.Method, r.URL.Path), http.StatusNotFound)
		return
	}
	h := handlers[v]
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "mockserver: read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	logged := Request{Vendor: v, Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	dec, bodyStream, err := h.decode(body)
	if v == Gemini {
		bodyStream = stream
		if dec != nil {
			dec.Model = model
		}
	}
	logged.Stream, logged.Decoded, logged.DecodeErr = bodyStream, dec, err
	s.mu.Lock()
	s.requests = append(s.requests, logged)
	s.mu.Unlock()

	if s.APIKey != "" && !hasKey(r, s.APIKey) {
		writeError(w, h, &Fault{Status: http.StatusUnauthorized, Message: "invalid x-api-key"})
		return
	}
	if err != nil {
		writeError(w, h, &Fault{Status: http.StatusBadRequest, Message: "mockserver: cannot decode request: " + err.Error()})
		return
	}
	turn, ok := s.turnFor(logged)
	if !ok {
		writeError(w, h, &Fault{Status: http.StatusInternalServerError, Message: "mockserver: script exhausted: enqueue a Turn for every model request"})
		return
	}
	if f := turn.Fault; f != nil {
		if f.ResetBeforeFirstByte {
			resetConn(w)
			return
		}
		if f.Status != 0 || f.ContextOverflow {
			writeError(w, h, f)
			return
		}
	}
	rw := &replyWriter{w: w, fault: turn.Fault}
	h.reply(rw, s.render(turn), dec, bodyStream)
}

func hasKey(r *http.Request, key string) bool {
	return r.Header.Get("x-api-key") == key ||
		r.Header.Get("Authorization") == "Bearer "+key ||
		r.Header.Get("x-goog-api-key") == key ||
		r.URL.Query().Get("key") == key
}

func (s *Server) serveModels(w http.ResponseWriter, r *http.Request) {
	if s.APIKey != "" && !hasKey(r, s.APIKey) {
		h := handlers[Anthropic]
		if strings.Contains(r.URL.Path, "v1beta") {
			h = handlers[Gemini]
		}
		writeError(w, h, &Fault{Status: http.StatusUnauthorized, Message: "invalid x-api-key"})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if strings.Contains(r.URL.Path, "v1beta") {
		_, _ = io.WriteString(w, `{"models":[{"name":"models/gemini-2.5-flash"}]}`)
		return
	}
	_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"mock-model","type":"model","object":"model"}],"has_more":false}`)
}

// rendered is a Turn with defaults filled in and its stream pieces cut.
type rendered struct {
	Turn
	TextChunks     []string
	ThinkingChunks []string
	Calls          []renderedCall
}

type renderedCall struct {
	ToolCall
	Chunks []string
}

func (s *Server) render(t Turn) rendered {
	r := rendered{Turn: t}
	n := s.chunkSize()
	r.TextChunks = chunks(t.Text, n)
	r.ThinkingChunks = chunks(t.Thinking, n)
	for i, c := range t.ToolCalls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d", i+1)
		}
		if c.Input == "" {
			c.Input = "{}"
		}
		r.Calls = append(r.Calls, renderedCall{ToolCall: c, Chunks: chunks(c.Input, n)})
	}
	if r.StopReason == "" {
		r.StopReason = llm.StopEndTurn
		if len(t.ToolCalls) > 0 {
			r.StopReason = llm.StopToolUse
		}
	}
	return r
}

// chunks cuts s into pieces of n runes.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		i, count := 0, 0
		for i < len(s) && count < n {
			_, size := decodeRune(s[i:])
			i += size
			count++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// vendorHandler is one wire format: it decodes requests and renders replies.
type vendorHandler interface {
	// decode parses a request body into rein's model; stream reports whether
	// the body asked for a streamed reply.
	decode(body []byte) (req *llm.Request, stream bool, err error)
	// errorBody renders the vendor's error body for f (f.ContextOverflow asks
	// for its context-length error).
	errorBody(status int, f *Fault) []byte
	// reply writes the turn as a streamed or a plain reply.
	reply(w *replyWriter, t rendered, req *llm.Request, stream bool)
}

// handlers holds one vendorHandler per wire format; each vendor's file
// registers its own in an init function.
var handlers = map[Vendor]vendorHandler{}

func writeError(w http.ResponseWriter, h vendorHandler, f *Fault) {
	status := f.Status
	if f.ContextOverflow && status == 0 {
		status = http.StatusBadRequest
	}
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	if f.RetryAfterMS != "" {
		w.Header().Set("retry-after-ms", f.RetryAfterMS)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(h.errorBody(status, f))
}

// defaultMessage is the error text used when a fault gives none.
func defaultMessage(status int) string {
	switch status {
	case 529:
		return "Overloaded"
	case http.StatusTooManyRequests:
		return "Rate limit exceeded, please slow down"
	}
	if t := http.StatusText(status); t != "" {
		return t
	}
	return fmt.Sprintf("error %d", status)
}

// mustJSON marshals v, which is always a value the server built itself.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("mockserver: " + err.Error())
	}
	return b
}
