package gemini

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/reinhq/rein/internal/jsonevents"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/vendorhttp"
)

// The reply of streamGenerateContent?alt=sse is read here rather than by the
// SDK, whose reader turns every chunk's JSON into a map, converts the map and
// encodes and decodes it again into its types: some hundred allocations per
// delta against a handful here (see BenchmarkStream).

// wireChunk is one chunk of the stream, a GenerateContentResponse, as far as
// rein reads it. It is reused from chunk to chunk, slices included, so that
// decoding a text delta costs little more than the text's string.
type wireChunk struct {
	Candidates []wireCandidate `json:"candidates"`
	// UsageMetadata is kept raw: every chunk may carry it, and only whether
	// it is there decides if it replaces the counts read so far.
	UsageMetadata  json.RawMessage `json:"usageMetadata"`
	PromptFeedback struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	ResponseID onceString      `json:"responseId"`
	Error      json.RawMessage `json:"error"` // an error sent inside the stream
}

type wireCandidate struct {
	Content struct {
		Parts []wirePart `json:"parts"`
	} `json:"content"`
	FinishReason string `json:"finishReason"`
}

// wirePart is one part of a candidate's content. Parts rein has no block for
// (inlineData, executableCode, …) decode to a part with none of the first
// four fields set; the documented ones are named by a flag, so the drop is
// counted by type (llm.RecordDrop), and their content is skipped, never
// copied.
type wirePart struct {
	Text             string `json:"text"`
	Thought          bool   `json:"thought"`
	ThoughtSignature []byte `json:"thoughtSignature"` // base64 on the wire
	FunctionCall     *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	InlineData          sent `json:"inlineData"`
	FileData            sent `json:"fileData"`
	ExecutableCode      sent `json:"executableCode"`
	CodeExecutionResult sent `json:"codeExecutionResult"`
	FunctionResponse    sent `json:"functionResponse"`
}

// sent records that a field was sent, its value skipped unread.
type sent bool

// UnmarshalJSON notes the field; null is no field.
func (p *sent) UnmarshalJSON(b []byte) error {
	*p = string(b) != "null"
	return nil
}

// dropped names a part rein keeps nothing of, for the drop count.
func (p *wirePart) dropped() string {
	switch {
	case bool(p.InlineData):
		return "inlineData"
	case bool(p.FileData):
		return "fileData"
	case bool(p.ExecutableCode):
		return "executableCode"
	case bool(p.CodeExecutionResult):
		return "codeExecutionResult"
	case bool(p.FunctionResponse):
		return "functionResponse"
	}
	return ""
}

// wireUsage is usageMetadata, with the SDK's integer types.
type wireUsage struct {
	PromptTokenCount        int32 `json:"promptTokenCount"`
	CachedContentTokenCount int32 `json:"cachedContentTokenCount"`
	CandidatesTokenCount    int32 `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int32 `json:"thoughtsTokenCount"`
}

// reset empties c for the next chunk, keeping the slices' memory: the
// decoder fills existing elements in place, so stale fields are cleared.
func (c *wireChunk) reset() {
	cands := c.Candidates[:cap(c.Candidates)]
	for i := range cands {
		parts := cands[i].Content.Parts[:cap(cands[i].Content.Parts)]
		clear(parts)
		cands[i] = wireCandidate{}
		cands[i].Content.Parts = parts[:0]
	}
	*c = wireChunk{
		Candidates:    cands[:0],
		UsageMetadata: c.UsageMetadata[:0],
		ResponseID:    c.ResponseID,
		Error:         c.Error[:0],
	}
}

// present reports whether a raw field was sent with a value.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// onceString is a field kept from the first chunk that has it: decoding it
// again on every chunk would allocate a string per delta.
type onceString struct{ s *string }

func (o onceString) UnmarshalJSON(b []byte) error {
	if o.s == nil || *o.s != "" || len(b) < 2 || b[0] != '"' {
		return nil
	}
	return json.Unmarshal(b, o.s)
}

// stream reads one reply's events and turns them into deltas.
type stream struct {
	name  string
	req   *llm.Request
	sse   *jsonevents.Reader // skips a byte-order mark and keep-alives (PROV-2)
	dec   jsonevents.Decoder // the chunks
	udec  jsonevents.Decoder // their usageMetadata
	usage []byte             // the usageMetadata last decoded
	chunk wireChunk
	acc   *accumulator
}

func newStream(name string, req *llm.Request, body io.Reader) *stream {
	s := &stream{name: name, req: req, sse: jsonevents.NewReader(body), acc: newAccumulator(name, req.Model)}
	s.chunk.ResponseID = onceString{&s.acc.responseID}
	return s
}

// run reads the reply to its end and yields its deltas; the last value
// yielded is a DeltaDone or an error.
func (s *stream) run(ctx context.Context, yield func(llm.Delta, error) bool) {
	for s.sse.Next() {
		if err := s.event(s.sse.Data()); err != nil {
			if ctx.Err() != nil {
				err = llm.FromTransport(ctx, s.name, ctx.Err())
			}
			yield(llm.Delta{}, err)
			return
		}
		if !s.acc.add(&s.chunk, yield) {
			return
		}
	}
	switch {
	case s.sse.Err() != nil || ctx.Err() != nil:
		yield(llm.Delta{}, llm.FromTransport(ctx, s.name, cmp.Or(s.sse.Err(), ctx.Err())))
	case !s.acc.finished:
		yield(llm.Delta{}, llm.StreamCut(s.name, "the chunk with the finish reason"))
	default:
		resp := s.acc.response()
		if resp.Usage == (llm.Usage{}) { // no usageMetadata came: estimated
			resp.Usage = jsonevents.EstimateUsage(s.req, &resp.Message)
		}
		yield(llm.Delta{Kind: llm.DeltaDone, Response: resp}, nil)
	}
}

// event decodes one event's data into s.chunk and takes its usage. An error
// object the API sent inside the stream wins over a chunk that does not
// decode, as it did with the SDK.
func (s *stream) event(data []byte) *llm.Error {
	s.chunk.reset()
	err := s.dec.Decode(data, &s.chunk)
	if e := s.chunkError(); e != nil {
		return e
	}
	if err != nil {
		return llm.Malformed(s.name, err)
	}
	// Usage is cumulative: the last one counts. The API repeats it on every
	// chunk, mostly unchanged.
	if u := s.chunk.UsageMetadata; present(u) && !bytes.Equal(u, s.usage) {
		s.acc.usage = wireUsage{}
		if err := s.udec.Decode(u, &s.acc.usage); err != nil {
			return llm.Malformed(s.name, err)
		}
		s.usage = append(s.usage[:0], u...)
	}
	return nil
}

// chunkError classifies {"error": {code, message, status, details}} sent
// inside a 200 stream as if it had come with the code as its status.
func (s *stream) chunkError() *llm.Error {
	if !present(s.chunk.Error) {
		return nil
	}
	var e *struct {
		Code int `json:"code"`
	}
	if json.Unmarshal(s.chunk.Error, &e) != nil || e == nil {
		return nil // not an error object: read as a reply, as the SDK did
	}
	body := make([]byte, 0, len(s.chunk.Error)+10)
	body = append(append(append(body, `{"error":`...), s.chunk.Error...), '}')
	return vendorhttp.FromHTTP(s.name, cmp.Or(e.Code, http.StatusInternalServerError), nil, body).WithAuthHint(envVar)
}
