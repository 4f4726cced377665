package openai

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"

	"github.com/reinhq/rein/internal/jsonevents"
	"github.com/reinhq/rein/llm"
)

// OpenAI's limits on one embeddings request: 2,048 inputs, and 300,000
// tokens summed over them. A token is at least a byte of text almost always
// and about four on average, so half a megabyte stays well under the token
// limit.
const (
	MaxEmbedInputs = 2048
	MaxEmbedBytes  = 512 << 10
)

// Embedder embeds texts through POST {BaseURL}/embeddings — OpenAI's
// embeddings API or an OpenAI-compatible server's. It implements
// [llm.Embedder] and [llm.EmbedLimiter] and is safe for concurrent use.
//
// Vectors are asked for as floats. OpenAI refuses an empty string, so an
// empty text is sent as a single space. Every request is sent once; wrap
// the embedder with [llm.RetryingEmbedder] to retry.
type Embedder struct {
	c     *client
	model string
	dims  int
}

var (
	_ llm.Embedder     = (*Embedder)(nil)
	_ llm.EmbedLimiter = (*Embedder)(nil)
)

// NewEmbedder returns an embedder for model ("text-embedding-3-small").
// dimensions > 0 asks for shorter vectors (text-embedding-3 and later);
// 0 takes the model's own size. cfg is the chat adapters' Config: key,
// base URL, HTTP client, name and headers.
func NewEmbedder(cfg Config, model string, dimensions int) *Embedder {
	c := newClient(cfg)
	return &Embedder{c: c, model: model, dims: max(dimensions, 0)}
}

// EmbedLimits returns OpenAI's limits on one request.
func (e *Embedder) EmbedLimits() llm.EmbedLimits {
	return llm.EmbedLimits{MaxTexts: MaxEmbedInputs, MaxBytes: MaxEmbedBytes}
}

// Embed returns one vector per text, in order (see [llm.Embedder]), sending
// as many requests as the limits need, one after the other.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if e.model == "" {
		return nil, &llm.Error{Kind: llm.KindBadRequest, Provider: e.c.name,
			Message: "no embedding model named", Hint: "name one, e.g. openai/text-embedding-3-small"}
	}
	return llm.EmbedBatched(ctx, e.c.name, texts, e.EmbedLimits(), e.embed)
}

// embed sends one request.
func (e *Embedder) embed(ctx context.Context, texts []string) ([][]float32, error) {
	inputs := make([]string, len(texts))
	for i, t := range texts {
		inputs[i] = t
		if t == "" {
			inputs[i] = " "
		}
	}
	res, err := e.c.do(ctx, http.MethodPost, "embeddings",
		&embedRequest{Input: inputs, Model: e.model, Dimensions: e.dims, EncodingFormat: "float"})
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, e.c.transportError(ctx, err)
	}
	vecs, err := decodeEmbeddings(body, len(texts))
	if err != nil {
		return nil, &llm.Error{Kind: llm.KindMalformed, Provider: e.c.name, Message: err.Error(), Err: err}
	}
	if err := llm.CheckEmbeddings(e.c.name, len(texts), e.dims, vecs); err != nil {
		return nil, err
	}
	return vecs, nil
}

// decodeEmbeddings reads an embeddings reply for n inputs: data items put in
// place by their index (by position when a server leaves it out), each
// vector a float array or base64 little-endian float32s.
func decodeEmbeddings(body []byte, n int) ([][]float32, error) {
	var reply struct {
		Data []struct {
			Index     *int   `json:"index"`
			Embedding vector `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(jsonevents.TrimBOM(body), &reply); err != nil {
		return nil, fmt.Errorf("embeddings reply: %w", err)
	}
	if len(reply.Data) != n {
		return nil, fmt.Errorf("embeddings reply: %d vectors for %d texts", len(reply.Data), n)
	}
	out := make([][]float32, n)
	for pos, d := range reply.Data {
		i := pos
		if d.Index != nil {
			i = *d.Index
		}
		if i < 0 || i >= n || out[i] != nil {
			return nil, fmt.Errorf("embeddings reply: item %d has index %d (want each of 0…%d once)", pos, i, n-1)
		}
		out[i] = d.Embedding
		if out[i] == nil {
			out[i] = []float32{}
		}
	}
	return out, nil
}

// vector is an embedding as OpenAI sends it: a JSON array of numbers, or a
// base64 string of little-endian float32s.
type vector []float32

// UnmarshalJSON reads either form. The array is parsed by hand: the
// reflection of encoding/json costs more than the rest of a call.
func (v *vector) UnmarshalJSON(raw []byte) error {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) > 0 && raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return fmt.Errorf("base64 embedding: %w", err)
		}
		if len(b)%4 != 0 {
			return fmt.Errorf("base64 embedding of %d bytes is not float32s", len(b))
		}
		out := make([]float32, len(b)/4)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		*v = out
		return nil
	case string(raw) == "null":
		*v = nil
		return nil
	case len(raw) < 2 || raw[0] != '[' || raw[len(raw)-1] != ']':
		return fmt.Errorf("embedding is not an array of numbers: %.40s", raw)
	}
	inner := bytes.TrimSpace(raw[1 : len(raw)-1])
	out := make([]float32, 0, bytes.Count(inner, []byte{','})+1)
	for len(inner) > 0 {
		num, rest, _ := bytes.Cut(inner, []byte{','})
		// The reply is valid JSON (checked before this runs), so a piece
		// that parses as a float is a JSON number.
		f, err := strconv.ParseFloat(string(bytes.TrimSpace(num)), 32)
		if err != nil {
			return fmt.Errorf("embedding holds %.40q, not a float32", bytes.TrimSpace(num))
		}
		out = append(out, float32(f))
		inner = rest
	}
	*v = out
	return nil
}
