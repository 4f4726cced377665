package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/reinhq/rein/llm"
)

// Version is the cassette format this package writes and reads.
const Version = 1

// Cassette is a parsed cassette file.
type Cassette struct {
	Header       Header
	Interactions []Interaction
	// TornLine is the number of a torn last line that [Parse] skipped (a
	// recording cut short by a crash), 0 when there was none.
	TornLine int
}

// Header is a cassette's first line.
type Header struct {
	Version int       `json:"version"`
	Created time.Time `json:"created"`
	// Provider and Model name what was recorded; replay stamps them on
	// replies that lack them.
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// UserConfig says the recording ran with the user's own configuration
	// (their agents, skills, MCP servers, settings): only a replay that
	// loads the same can match it. Without it the recording was made with
	// none, and a replay loads none, so it runs for every user.
	UserConfig bool `json:"user_config,omitempty"`
}

// Interaction is one model call: the request, what the stream yielded, and
// how it ended. When neither Response nor Error is set the stream ended
// without a result (a broken adapter), and replay does the same.
type Interaction struct {
	// RequestHash is [Hash] of Request.
	RequestHash string `json:"request_hash"`
	// Request is the request's canonical JSON ([Canonical]).
	Request json.RawMessage `json:"request"`
	// Deltas are the stream's deltas before its end, Done excluded.
	Deltas   []RecordedDelta   `json:"deltas"`
	Response *RecordedResponse `json:"response,omitempty"`
	Error    *RecordedError    `json:"error,omitempty"`
}

// RecordedDelta is an [llm.Delta] other than Done.
type RecordedDelta struct {
	// Kind is the delta kind's name: text, thinking, tool_start, tool_input
	// or retry.
	Kind string `json:"kind"`
	// ID and Name identify a tool call (tool_start, tool_input).
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
	Text string `json:"text,omitempty"`
	// Attempt, DelayMS and Error describe a retry.
	Attempt int            `json:"attempt,omitempty"`
	DelayMS int64          `json:"delay_ms,omitempty"`
	Error   *RecordedError `json:"error,omitempty"`
}

// RecordedResponse is an [llm.Response].
type RecordedResponse struct {
	ID         string         `json:"id,omitempty"`
	Message    llm.Message    `json:"message"`
	StopReason llm.StopReason `json:"stop_reason"`
	Usage      llm.Usage      `json:"usage"`
}

// RecordedError is a stream's failure. Replay turns it into an [*llm.Error];
// an error that was not one is kept with the kind [llm.KindOf] gives it.
type RecordedError struct {
	// Kind is the [llm.ErrorKind]'s name ("rate_limit").
	Kind         string `json:"kind"`
	Provider     string `json:"provider,omitempty"`
	Status       int    `json:"status,omitempty"`
	Message      string `json:"message"`
	Hint         string `json:"hint,omitempty"`
	RetryAfterMS int64  `json:"retry_after_ms,omitempty"`
}

// Parse reads a cassette. Errors name the line they are on.
//
// Blank lines are skipped. A last line that does not parse and is not
// terminated by a newline is a write torn by a crash: it is skipped and its
// number kept in TornLine, so a cassette whose recording died still plays up
// to that point. A bad line anywhere else is an error. Each request is
// normalised to its canonical form and its hash recomputed, so a cassette
// edited by hand (spacing, key order) still matches.
func Parse(r io.Reader) (*Cassette, error) {
	c, err := parse(r)
	if err != nil {
		return nil, fmt.Errorf("replay: cassette: %w", err)
	}
	return c, nil
}

func parse(r io.Reader) (*Cassette, error) {
	br := bufio.NewReader(r)
	c := &Cassette{}
	header := false
	for n := 1; ; n++ {
		line, readErr := br.ReadBytes('\n')
		if readErr != nil && readErr != io.EOF {
			return nil, fmt.Errorf("line %d: %w", n, readErr)
		}
		terminated := readErr == nil
		if len(bytes.TrimSpace(line)) > 0 {
			var err error
			if !header {
				c.Header, err = parseHeader(line)
				header = err == nil
			} else {
				var it Interaction
				if it, err = parseInteraction(line); err == nil {
					c.Interactions = append(c.Interactions, it)
				}
			}
			switch {
			case err != nil && !terminated && header:
				c.TornLine = n
			case err != nil:
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
		}
		if !terminated {
			break
		}
	}
	if !header {
		return nil, errors.New("no header line (the file is empty)")
	}
	return c, nil
}

// ReadHeader reads only a cassette's header line.
func ReadHeader(r io.Reader) (Header, error) {
	line, err := bufio.NewReader(r).ReadBytes('\n')
	if err != nil && err != io.EOF {
		return Header{}, fmt.Errorf("replay: cassette: line 1: %w", err)
	}
	h, err := parseHeader(line)
	if err != nil {
		return h, fmt.Errorf("replay: cassette: line 1: %w", err)
	}
	return h, nil
}

func parseHeader(line []byte) (Header, error) {
	var h Header
	if err := json.Unmarshal(line, &h); err != nil {
		return h, fmt.Errorf("header: %w", err)
	}
	if h.Version != Version {
		return h, fmt.Errorf("header: cassette version %d, want %d (not a cassette, or written by another rein)", h.Version, Version)
	}
	return h, nil
}

func parseInteraction(line []byte) (Interaction, error) {
	var it Interaction
	if err := json.Unmarshal(line, &it); err != nil {
		return it, err
	}
	if len(it.Request) == 0 {
		return it, errors.New("interaction has no request")
	}
	canon, err := parseCanon(it.Request)
	if err != nil {
		return it, fmt.Errorf("request: %w", err)
	}
	it.Request, it.RequestHash = canon, Hash(canon)
	if it.Response != nil && it.Error != nil {
		return it, errors.New("interaction has both a response and an error")
	}
	for i, d := range it.Deltas {
		if err := checkDelta(d); err != nil {
			return it, fmt.Errorf("deltas[%d]: %w", i, err)
		}
	}
	if it.Error != nil {
		if _, err := parseKind(it.Error.Kind); err != nil {
			return it, fmt.Errorf("error: %w", err)
		}
	}
	if it.Deltas == nil {
		it.Deltas = []RecordedDelta{}
	}
	return it, nil
}

func checkDelta(d RecordedDelta) error {
	switch d.Kind {
	case "text", "thinking", "tool_start", "tool_input":
		return nil
	case "retry":
		if d.Error == nil {
			return errors.New("retry delta without an error")
		}
		_, err := parseKind(d.Error.Kind)
		return err
	}
	return fmt.Errorf("unknown delta kind %q (want text, thinking, tool_start, tool_input or retry)", d.Kind)
}

// WriteTo writes c in the cassette format: the header, then one line per
// interaction. TornLine is not written.
func (c *Cassette) WriteTo(w io.Writer) (int64, error) {
	var total int64
	line, err := encodeLine(c.Header)
	if err != nil {
		return 0, err
	}
	for i := 0; ; i++ {
		n, err := w.Write(line)
		total += int64(n)
		if err != nil || i == len(c.Interactions) {
			return total, err
		}
		if line, err = encodeLine(c.Interactions[i]); err != nil {
			return total, fmt.Errorf("replay: interaction %d: %w", i+1, err)
		}
	}
}

// encodeLine returns v as one line of compact JSON ending in a newline.
func encodeLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

var deltaKinds = map[llm.DeltaKind]string{
	llm.DeltaText:      "text",
	llm.DeltaThinking:  "thinking",
	llm.DeltaToolStart: "tool_start",
	llm.DeltaToolInput: "tool_input",
	llm.DeltaRetry:     "retry",
}

// recordDelta returns d as recorded; ok is false for a kind a cassette does
// not hold (Done, or one this package does not know).
func recordDelta(d llm.Delta) (rd RecordedDelta, ok bool) {
	rd = RecordedDelta{Kind: deltaKinds[d.Kind], Text: d.Text, ID: d.ToolUseID, Name: d.ToolName}
	if rd.Kind == "" {
		return rd, false
	}
	if d.Kind == llm.DeltaRetry {
		rd.Error = &RecordedError{Kind: llm.KindUnknown.String()}
		if ri := d.Retry; ri != nil {
			rd.Attempt, rd.DelayMS = ri.Attempt, ri.Delay.Milliseconds()
			if ri.Err != nil {
				rd.Error = recordError(ri.Err)
			}
		}
	}
	return rd, true
}

// delta returns the recorded delta as an [llm.Delta]; its kind was checked by
// Parse.
func (rd RecordedDelta) delta() llm.Delta {
	d := llm.Delta{Text: rd.Text, ToolUseID: rd.ID, ToolName: rd.Name}
	for k, name := range deltaKinds {
		if name == rd.Kind {
			d.Kind = k
		}
	}
	if d.Kind == llm.DeltaRetry {
		d.Retry = &llm.RetryInfo{Attempt: rd.Attempt, Delay: time.Duration(rd.DelayMS) * time.Millisecond, Err: rd.Error.llmError()}
	}
	return d
}

func recordResponse(r *llm.Response) *RecordedResponse {
	return &RecordedResponse{ID: r.ID, Message: cloneMessage(r.Message), StopReason: r.StopReason, Usage: r.Usage}
}

func recordError(err error) *RecordedError {
	e, ok := llm.AsError(err)
	if !ok {
		return &RecordedError{Kind: llm.KindOf(err).String(), Message: err.Error()}
	}
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	return &RecordedError{Kind: e.Kind.String(), Provider: e.Provider, Status: e.Status, Message: msg,
		Hint: e.Hint, RetryAfterMS: e.RetryAfter.Milliseconds()}
}

// llmError returns the recorded failure as an [*llm.Error]. A cancellation
// wraps context.Canceled, so errors.Is sees it as one.
func (re *RecordedError) llmError() *llm.Error {
	kind, _ := parseKind(re.Kind) // checked by Parse
	e := &llm.Error{Kind: kind, Provider: re.Provider, Status: re.Status, Message: re.Message, Hint: re.Hint,
		RetryAfter: time.Duration(re.RetryAfterMS) * time.Millisecond}
	if kind == llm.KindCancelled {
		e.Err = context.Canceled
	}
	return e
}

// parseKind returns the error kind of the given name.
func parseKind(name string) (llm.ErrorKind, error) {
	if k, ok := llm.ParseErrorKind(name); ok {
		return k, nil
	}
	return 0, fmt.Errorf("unknown error kind %q", name)
}

// cloneMessage returns a deep copy of m, so neither the recorder's caller nor
// a replay's caller can change a recording by changing what it got.
func cloneMessage(m llm.Message) llm.Message {
	m.Content = cloneBlocks(m.Content)
	return m
}

func cloneBlocks(bs []llm.Block) []llm.Block {
	if bs == nil {
		return nil
	}
	out := make([]llm.Block, len(bs))
	for i, b := range bs {
		switch b := b.(type) {
		case *llm.Text:
			c := *b
			out[i] = &c
		case *llm.Image:
			c := *b
			c.Data = bytes.Clone(b.Data)
			out[i] = &c
		case *llm.Thinking:
			c := *b
			out[i] = &c
		case *llm.ToolUse:
			c := *b
			c.Input = bytes.Clone(b.Input)
			out[i] = &c
		case *llm.ToolResult:
			c := *b
			c.Content = cloneBlocks(b.Content)
			out[i] = &c
		case *llm.Opaque:
			c := *b
			c.Raw = bytes.Clone(b.Raw)
			out[i] = &c
		default:
			out[i] = b
		}
	}
	return out
}
