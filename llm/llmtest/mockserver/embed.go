package mockserver

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// The embedding endpoints, in each vendor's documented wire format:
//
//	POST …/embeddings (OpenAI, /v1/embeddings or /embeddings):
//	    {"model", "input": string | [string] | [int] | [[int]], "dimensions"?,
//	    "encoding_format"?: "float" | "base64"} → {"object": "list", "data":
//	    [{"object": "embedding", "index", "embedding"}], "model", "usage":
//	    {"prompt_tokens", "total_tokens"}}
//	POST /v1beta/models/{model}:embedContent (Gemini): {"content": {"parts":
//	    [{"text"}]}, "taskType"?, "title"?, "outputDimensionality"?} →
//	    {"embedding": {"values"}}
//	POST /v1beta/models/{model}:batchEmbedContents (Gemini): {"requests":
//	    [{"model": "models/{model}", "content", …}]} (at most 100) →
//	    {"embeddings": [{"values"}]}
//	POST /api/embed (Ollama): {"model", "input": string | [string],
//	    "dimensions"?, "truncate"?, "options"?, "keep_alive"?} → {"model",
//	    "embeddings": [[…]], "total_duration", "load_duration",
//	    "prompt_eval_count"}; errors are {"error": "text"}.
//
// Embedding calls need no script: every text gets [Embed]'s deterministic
// vector. Faults come from their own queue ([Server.EnqueueEmbedFaults]).

// The embedding wire formats, as logged in [Request.Vendor].
const (
	OpenAIEmbeddings Vendor = "openai-embeddings"
	GeminiEmbeddings Vendor = "gemini-embeddings"
	Ollama           Vendor = "ollama"
)

// Limits of the mock's embedding endpoints.
const (
	// DefaultEmbedDim is the dimension of a vector when the request names none.
	DefaultEmbedDim = 256
	// MaxEmbedDim is the largest dimension a request may ask for.
	MaxEmbedDim = 8192
	// MaxOpenAIInputs and MaxGeminiBatch are the vendors' per-request limits.
	MaxOpenAIInputs = 2048
	MaxGeminiBatch  = 100
	// maxEmbedBody bounds a request body.
	maxEmbedBody = 64 << 20
)

// EmbedFault breaks one embedding reply on purpose. Of the [Fault] fields,
// Status, Message, RetryAfter, RetryAfterMS, RetryDelay,
// ResetBeforeFirstByte, Malformed (a body that is not JSON) and BOM apply.
type EmbedFault struct {
	Fault
	// WrongCount answers one vector fewer than there were texts.
	WrongCount bool `json:"wrong_count,omitempty"`
	// MixedDimensions makes the last vector one dimension shorter.
	MixedDimensions bool `json:"mixed_dimensions,omitempty"`
}

// embedFaults holds each server's queue of embedding faults. Server's
// fields are fixed in server.go; the queue lives beside them.
var embedFaults = struct {
	sync.Mutex
	m map[*Server][]EmbedFault
}{m: map[*Server][]EmbedFault{}}

// EnqueueEmbedFaults appends faults for the next embedding requests, one
// each; once they are used up, requests are answered normally again. The
// chat script is not involved, and Reset leaves these faults queued.
func (s *Server) EnqueueEmbedFaults(f ...EmbedFault) {
	embedFaults.Lock()
	defer embedFaults.Unlock()
	embedFaults.m[s] = append(embedFaults.m[s], f...)
}

func (s *Server) nextEmbedFault() *EmbedFault {
	embedFaults.Lock()
	defer embedFaults.Unlock()
	q := embedFaults.m[s]
	if len(q) == 0 {
		return nil
	}
	f := q[0]
	if len(q) == 1 {
		delete(embedFaults.m, s)
	} else {
		embedFaults.m[s] = q[1:]
	}
	return &f
}

// embedRequest is an embedding request decoded from any vendor's format.
type embedRequest struct {
	Model  string
	Inputs []string
	Dims   int  // 0: DefaultEmbedDim
	Base64 bool // OpenAI encoding_format "base64"
	Single bool // Gemini :embedContent (one content, one embedding)
}

// embedError is a request the vendor refuses: status and message.
type embedError struct {
	Status  int
	Message string
}

func (e *embedError) Error() string { return e.Message }

func badEmbed(format string, args ...any) *embedError {
	return &embedError{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, args...)}
}

// embedRoute tells an embedding request's format; model is the Gemini
// model in the path.
func embedRoute(r *http.Request) (v Vendor, model string, single, ok bool) {
	p := r.URL.Path
	if r.Method != http.MethodPost {
		return "", "", false, false
	}
	switch {
	case strings.HasSuffix(p, "/api/embed"):
		return Ollama, "", false, true
	case strings.HasSuffix(p, "/embeddings") && !strings.HasSuffix(p, "/api/embeddings"):
		return OpenAIEmbeddings, "", false, true
	case strings.Contains(p, "/models/") && strings.HasSuffix(p, ":embedContent"):
		return GeminiEmbeddings, geminiModel(p), true, true
	case strings.Contains(p, "/models/") && strings.HasSuffix(p, ":batchEmbedContents"):
		return GeminiEmbeddings, geminiModel(p), false, true
	}
	return "", "", false, false
}

// ServeEmbedding answers r when it is an embedding request of OpenAI, Gemini
// or Ollama (see the formats above) and reports whether it was one. The
// request is logged like a chat request (Decoded stays nil). With APIKey
// set, the OpenAI and Gemini endpoints require it; Ollama has no auth. A
// handler serving chat and embeddings calls it first and falls back to
// [Server.Handler] when it reports false.
func (s *Server) ServeEmbedding(w http.ResponseWriter, r *http.Request) bool {
	v, model, single, ok := embedRoute(r)
	if !ok {
		return false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxEmbedBody))
	if err != nil {
		writeEmbedError(w, v, &Fault{Status: http.StatusRequestEntityTooLarge, Message: "mockserver: read body: " + err.Error()})
		return true
	}
	req, derr := decodeEmbed(v, model, single, body)
	logged := Request{Vendor: v, Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	if derr != nil {
		logged.DecodeErr = derr
	}
	s.mu.Lock()
	s.requests = append(s.requests, logged)
	s.mu.Unlock()

	if s.APIKey != "" && v != Ollama && !hasKey(r, s.APIKey) {
		writeEmbedError(w, v, &Fault{Status: http.StatusUnauthorized})
		return true
	}
	f := s.nextEmbedFault()
	if f != nil && f.ResetBeforeFirstByte {
		resetConn(w)
		return true
	}
	if f != nil && f.Status != 0 {
		writeEmbedError(w, v, &f.Fault)
		return true
	}
	if derr != nil {
		writeEmbedError(w, v, &Fault{Status: derr.Status, Message: derr.Message})
		return true
	}
	vecs := make([][]float32, len(req.Inputs))
	for i, t := range req.Inputs {
		vecs[i] = Embed(t, req.Dims)
	}
	if f != nil {
		vecs = breakVectors(f, vecs)
	}
	out := renderEmbed(v, req, vecs)
	w.Header().Set("Content-Type", "application/json")
	if f != nil && f.BOM {
		_, _ = w.Write([]byte("\uFEFF"))
	}
	if f != nil && f.Malformed {
		out = out[:len(out)/2]
	}
	_, _ = w.Write(out)
	return true
}

// breakVectors applies a fault's WrongCount and MixedDimensions.
func breakVectors(f *EmbedFault, vecs [][]float32) [][]float32 {
	if f.WrongCount && len(vecs) > 0 {
		vecs = vecs[:len(vecs)-1]
	}
	if f.MixedDimensions && len(vecs) > 0 {
		last := vecs[len(vecs)-1]
		vecs[len(vecs)-1] = last[:max(len(last)-1, 0)]
	}
	return vecs
}

// writeEmbedError writes the vendor's error reply for f.
func writeEmbedError(w http.ResponseWriter, v Vendor, f *Fault) {
	status := f.Status
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	if f.RetryAfterMS != "" {
		w.Header().Set("retry-after-ms", f.RetryAfterMS)
	}
	var body []byte
	switch v {
	case OpenAIEmbeddings:
		body = openAIErrorBody(status, f)
	case GeminiEmbeddings:
		body = geminiHandler{}.errorBody(status, f)
	default:
		msg := f.Message
		if msg == "" {
			msg = strings.ToLower(defaultMessage(status))
		}
		body = mustJSON(map[string]string{"error": msg})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// decodeEmbed decodes and validates a request body as the vendor would.
func decodeEmbed(v Vendor, model string, single bool, body []byte) (*embedRequest, *embedError) {
	switch v {
	case OpenAIEmbeddings:
		return decodeOpenAIEmbed(body)
	case GeminiEmbeddings:
		return decodeGeminiEmbed(model, single, body)
	}
	return decodeOllamaEmbed(body)
}

func decodeOpenAIEmbed(body []byte) (*embedRequest, *embedError) {
	var in struct {
		Model          *string         `json:"model"`
		Input          json.RawMessage `json:"input"`
		Dimensions     *int            `json:"dimensions"`
		EncodingFormat *string         `json:"encoding_format"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, badEmbed("We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)")
	}
	if in.Model == nil || *in.Model == "" {
		return nil, badEmbed("you must provide a model parameter")
	}
	if len(in.Input) == 0 || string(in.Input) == "null" {
		return nil, badEmbed("'input' is a required property")
	}
	inputs, err := openAIInputs(in.Input)
	if err != nil {
		return nil, err
	}
	req := &embedRequest{Model: *in.Model, Inputs: inputs}
	if f := in.EncodingFormat; f != nil {
		switch *f {
		case "float":
		case "base64":
			req.Base64 = true
		default:
			return nil, badEmbed("%q is not one of ['float', 'base64'] - 'encoding_format'", *f)
		}
	}
	if d := in.Dimensions; d != nil {
		if *d < 1 || *d > MaxEmbedDim {
			return nil, badEmbed("Invalid value for 'dimensions' = %d. Must be between 1 and %d.", *d, MaxEmbedDim)
		}
		req.Dims = *d
	}
	return req, nil
}

// openAIInputs reads OpenAI's input union: a string, strings, tokens, or
// arrays of tokens (embedded as their decimal text).
func openAIInputs(raw json.RawMessage) ([]string, *embedError) {
	invalid := badEmbed("'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.")
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "" {
			return nil, invalid
		}
		return []string{one}, nil
	}
	var many []json.RawMessage
	if json.Unmarshal(raw, &many) != nil || len(many) == 0 {
		return nil, invalid
	}
	if len(many) > MaxOpenAIInputs {
		return nil, badEmbed("Invalid 'input': array too long. Expected an array with maximum length %d, but got an array with length %d instead.",
			MaxOpenAIInputs, len(many))
	}
	var tokens []int64
	if json.Unmarshal(raw, &tokens) == nil {
		return []string{tokenText(tokens)}, nil
	}
	out := make([]string, len(many))
	for i, m := range many {
		var s string
		var toks []int64
		switch {
		case json.Unmarshal(m, &s) == nil && s != "":
			out[i] = s
		case json.Unmarshal(m, &toks) == nil && len(toks) > 0:
			out[i] = tokenText(toks)
		default:
			return nil, invalid
		}
	}
	return out, nil
}

func tokenText(toks []int64) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, t)
	}
	return b.String()
}

// geminiTaskTypes are the task types the Gemini API accepts.
var geminiTaskTypes = map[string]bool{
	"": true, "TASK_TYPE_UNSPECIFIED": true, "RETRIEVAL_QUERY": true, "RETRIEVAL_DOCUMENT": true,
	"SEMANTIC_SIMILARITY": true, "CLASSIFICATION": true, "CLUSTERING": true, "QUESTION_ANSWERING": true,
	"FACT_VERIFICATION": true, "CODE_RETRIEVAL_QUERY": true,
}

type gemEmbedRequest struct {
	Model   string `json:"model"`
	Content *struct {
		Parts []struct {
			Text *string `json:"text"`
		} `json:"parts"`
	} `json:"content"`
	TaskType             string `json:"taskType"`
	OutputDimensionality *int   `json:"outputDimensionality"`
}

func decodeGeminiEmbed(model string, single bool, body []byte) (*embedRequest, *embedError) {
	req := &embedRequest{Model: model, Single: single}
	var reqs []gemEmbedRequest
	if single {
		var one gemEmbedRequest
		if err := json.Unmarshal(body, &one); err != nil {
			return nil, badEmbed("Invalid JSON payload received. %v", err)
		}
		reqs = []gemEmbedRequest{one}
	} else {
		var in struct {
			Requests []gemEmbedRequest `json:"requests"`
		}
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, badEmbed("Invalid JSON payload received. %v", err)
		}
		switch {
		case len(in.Requests) == 0:
			return nil, badEmbed("* BatchEmbedContentsRequest.requests: requests is not specified")
		case len(in.Requests) > MaxGeminiBatch:
			return nil, badEmbed("* BatchEmbedContentsRequest.requests: at most %d requests can be in one batch", MaxGeminiBatch)
		}
		reqs = in.Requests
	}
	for i, r := range reqs {
		where := fmt.Sprintf("requests[%d]", i)
		if single {
			where = "EmbedContentRequest"
		}
		if !single && strings.TrimPrefix(r.Model, "models/") != model {
			return nil, badEmbed("* BatchEmbedContentsRequest.%s.model: the model %q of a request must be the model of the URL, models/%s", where, r.Model, model)
		}
		if !geminiTaskTypes[r.TaskType] {
			return nil, badEmbed("Invalid value at '%s.task_type' (type.googleapis.com/google.ai.generativelanguage.v1beta.TaskType), %q", where, r.TaskType)
		}
		text, err := gemEmbedText(r, where)
		if err != nil {
			return nil, err
		}
		if d := r.OutputDimensionality; d != nil {
			if *d < 1 || *d > MaxEmbedDim {
				return nil, badEmbed("* %s.output_dimensionality: must be between 1 and %d", where, MaxEmbedDim)
			}
			if req.Dims != 0 && req.Dims != *d {
				return nil, badEmbed("* %s.output_dimensionality: every request of a batch must ask for the same dimensionality", where)
			}
			req.Dims = *d
		}
		req.Inputs = append(req.Inputs, text)
	}
	return req, nil
}

func gemEmbedText(r gemEmbedRequest, where string) (string, *embedError) {
	if r.Content == nil || len(r.Content.Parts) == 0 {
		return "", badEmbed("* %s.content: contents is not specified", where)
	}
	var b strings.Builder
	for _, p := range r.Content.Parts {
		if p.Text == nil {
			return "", badEmbed("* %s.content.parts: only text parts can be embedded", where)
		}
		b.WriteString(*p.Text)
	}
	if b.Len() == 0 {
		return "", badEmbed("* %s.content.parts[0].text: text is empty", where)
	}
	return b.String(), nil
}

func decodeOllamaEmbed(body []byte) (*embedRequest, *embedError) {
	var in struct {
		Model      string          `json:"model"`
		Input      json.RawMessage `json:"input"`
		Dimensions int             `json:"dimensions"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, badEmbed("%v", err)
	}
	if in.Model == "" {
		return nil, badEmbed("model is required")
	}
	req := &embedRequest{Model: in.Model, Inputs: []string{}}
	if d := in.Dimensions; d != 0 {
		if d < 1 || d > MaxEmbedDim {
			return nil, badEmbed("dimensions must be between 1 and %d", MaxEmbedDim)
		}
		req.Dims = d
	}
	var one string
	var many []string
	switch {
	case len(in.Input) == 0 || string(in.Input) == "null":
		// Ollama answers no input with no embeddings.
	case json.Unmarshal(in.Input, &one) == nil:
		if one != "" {
			req.Inputs = []string{one}
		}
	case json.Unmarshal(in.Input, &many) == nil:
		req.Inputs = many
	default:
		return nil, badEmbed("invalid input type")
	}
	return req, nil
}

// renderEmbed renders the vendor's reply for vecs.
func renderEmbed(v Vendor, req *embedRequest, vecs [][]float32) []byte {
	tokens := 0
	for _, t := range req.Inputs {
		tokens += max((len(t)+3)/4, 1)
	}
	switch v {
	case OpenAIEmbeddings:
		type item struct {
			Object    string `json:"object"`
			Index     int    `json:"index"`
			Embedding any    `json:"embedding"`
		}
		data := make([]item, len(vecs))
		for i, vec := range vecs {
			data[i] = item{Object: "embedding", Index: i, Embedding: floatsJSON(vec)}
			if req.Base64 {
				data[i].Embedding = base64Floats(vec)
			}
		}
		return mustJSON(map[string]any{"object": "list", "data": data, "model": req.Model,
			"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}})
	case GeminiEmbeddings:
		type values struct {
			Values []float32 `json:"values"`
		}
		if req.Single && len(vecs) == 1 {
			return mustJSON(map[string]values{"embedding": {vecs[0]}})
		}
		out := make([]values, len(vecs))
		for i, vec := range vecs {
			out[i] = values{vec}
		}
		return mustJSON(map[string][]values{"embeddings": out})
	}
	raw := make([]json.RawMessage, len(vecs))
	for i, vec := range vecs {
		raw[i] = floatsJSON(vec)
	}
	return mustJSON(map[string]any{"model": req.Model, "embeddings": raw,
		"total_duration": 1000 * len(vecs), "load_duration": 0, "prompt_eval_count": tokens})
}

// floatsJSON renders a vector as a JSON array, faster than reflection does.
func floatsJSON(v []float32) json.RawMessage {
	b := make([]byte, 0, 12*len(v)+2)
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, float64(x), 'g', -1, 32)
	}
	return append(b, ']')
}

// base64Floats is OpenAI's base64 encoding: little-endian float32s.
func base64Floats(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// Embed returns the mock's vector of text: deterministic feature hashing,
// not a model. Its features are the lowercased words of text (runs of
// letters and digits; an identifier counts whole and, split at '_' and
// camelCase boundaries, by its parts) with weight 1, and the character
// trigrams of each part ("^" and "$" marking its ends) with weight 0.25.
// Each feature adds ±weight to one of dim buckets, bucket and sign taken
// from its 64-bit FNV-1a hash; the vector is L2-normalised. Texts sharing
// words or word pieces get similar vectors; a text with no words gets a
// fixed unit vector. dim ≤ 0 means DefaultEmbedDim.
func Embed(text string, dim int) []float32 {
	if dim <= 0 {
		dim = DefaultEmbedDim
	}
	v := make([]float32, dim)
	words := 0
	for word := range identifiers(text) {
		words++
		parts := splitIdentifier(word)
		lower := strings.ToLower(strings.Trim(word, "_"))
		addFeature(v, 'w', lower, 1)
		for _, p := range parts {
			p = strings.ToLower(p)
			if len(parts) > 1 {
				addFeature(v, 'w', p, 1)
			}
			addTrigrams(v, p)
		}
	}
	if words == 0 {
		addFeature(v, 'e', "", 1)
	}
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	norm := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= norm
	}
	return v
}

// identifiers yields the runs of letters, digits and '_' of text that hold
// a letter or a digit.
func identifiers(text string) func(func(string) bool) {
	return func(yield func(string) bool) {
		start := -1
		for i, r := range text + " " {
			in := r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
			switch {
			case in && start < 0:
				start = i
			case !in && start >= 0:
				w := text[start:i]
				start = -1
				if strings.Trim(w, "_") != "" && !yield(w) {
					return
				}
			}
		}
	}
}

// splitIdentifier cuts an identifier at '_' and at camelCase boundaries:
// "parseHTTPRequest_v2" → parse, HTTP, Request, v2.
func splitIdentifier(w string) []string {
	var parts []string
	rs := []rune(w)
	start := 0
	flush := func(end int) {
		if end > start {
			parts = append(parts, string(rs[start:end]))
		}
	}
	for i, r := range rs {
		switch {
		case r == '_':
			flush(i)
			start = i + 1
		case i > start && unicode.IsUpper(r) && unicode.IsLower(rs[i-1]),
			i > start && unicode.IsUpper(r) && i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]):
			flush(i)
			start = i
		}
	}
	flush(len(rs))
	return parts
}

// addTrigrams adds the character trigrams of "^word$".
func addTrigrams(v []float32, word string) {
	padded := "^" + word + "$"
	idx := make([]int, 0, len(padded)+1)
	for i := range padded {
		idx = append(idx, i)
	}
	idx = append(idx, len(padded))
	for i := 0; i+3 < len(idx); i++ {
		addFeature(v, 't', padded[idx[i]:idx[i+3]], 0.25)
	}
}

// addFeature adds ±w to the bucket of the feature (kind, s).
func addFeature(v []float32, kind byte, s string, w float32) {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	h = (h ^ uint64(kind)) * prime
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * prime
	}
	b := int((h & (1<<63 - 1)) % uint64(len(v)))
	if h>>63 == 1 {
		w = -w
	}
	v[b] += w
}
