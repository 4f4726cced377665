package gemini

import (
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/reinhq/rein/llm"
)

// The Gemini API's limits on one batchEmbedContents request: 100 contents.
// Each content may hold 2,048 tokens; the byte budget keeps a request of
// a hundred chunk-sized texts whole.
const (
	MaxEmbedBatch = 100
	MaxEmbedBytes = 512 << 10
)

// The task types the embedder asks for: documents are embedded for
// retrieval, queries as queries, so the model can place them apart.
const (
	taskDocument = "RETRIEVAL_DOCUMENT"
	taskQuery    = "RETRIEVAL_QUERY"
)

// Embedder embeds texts through the Gemini API's batchEmbedContents, every
// text a content of one text part. It
// implements [llm.QueryEmbedder] and [llm.EmbedLimiter] and is safe for
// concurrent use.
//
// Embed asks for task type RETRIEVAL_DOCUMENT and EmbedQuery for
// RETRIEVAL_QUERY. Gemini refuses an empty text, so one is sent as a single
// space. Vectors shorter than the model's own (outputDimensionality) come
// back unnormalised, as Gemini sends them; cosine similarity does not mind.
type Embedder struct {
	p     *Provider
	model string
	dims  int
}

var (
	_ llm.QueryEmbedder = (*Embedder)(nil)
	_ llm.EmbedLimiter  = (*Embedder)(nil)
)

// NewEmbedder returns an embedder for model ("gemini-embedding-001") over
// the same Config as [New]. dimensions > 0 asks for vectors of that size
// (gemini-embedding-001: 768, 1536 or 3072 are recommended); 0 takes the
// model's own (3072). It makes no request.
func NewEmbedder(cfg Config, model string, dimensions int) *Embedder {
	return &Embedder{p: New(cfg), model: model, dims: max(dimensions, 0)}
}

// EmbedLimits returns the Gemini API's limits on one request.
func (e *Embedder) EmbedLimits() llm.EmbedLimits {
	return llm.EmbedLimits{MaxTexts: MaxEmbedBatch, MaxBytes: MaxEmbedBytes}
}

// Embed returns one document vector per text, in order (see
// [llm.Embedder]), in as many requests as the limits need.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	return llm.EmbedBatched(ctx, e.p.name, texts, e.EmbedLimits(), func(ctx context.Context, batch []string) ([][]float32, error) {
		return e.embed(ctx, batch, taskDocument)
	})
}

// EmbedQuery returns the vector of a search query.
func (e *Embedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	vecs, err := e.embed(ctx, []string{text}, taskQuery)
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

func (e *Embedder) check() *llm.Error {
	if e.model == "" {
		return &llm.Error{Kind: llm.KindBadRequest, Provider: e.p.name,
			Message: "no embedding model named", Hint: "name one, e.g. gemini/gemini-embedding-001"}
	}
	return nil
}

// embedRequest is one request of batchEmbedContents.
type embedRequest struct {
	Content              embedContent `json:"content"`
	Model                string       `json:"model"`
	OutputDimensionality int32        `json:"outputDimensionality,omitempty"`
	TaskType             string       `json:"taskType"`
}

// embedContent is a content of text parts.
type embedContent struct {
	Parts []embedPart `json:"parts"`
}

// embedPart is one text part.
type embedPart struct {
	Text string `json:"text"`
}

// embed sends one request.
func (e *Embedder) embed(ctx context.Context, texts []string, task string) ([][]float32, error) {
	path, err := modelPath(e.model)
	if err != nil {
		return nil, &llm.Error{Kind: llm.KindBadRequest, Provider: e.p.name, Message: err.Error(), Err: err}
	}
	reqs := make([]embedRequest, len(texts))
	for i, t := range texts {
		if t == "" {
			t = " "
		}
		reqs[i] = embedRequest{Content: embedContent{Parts: []embedPart{{Text: t}}}, Model: path,
			OutputDimensionality: int32(e.dims), TaskType: task}
	}
	resp, lerr := e.p.do(ctx, http.MethodPost, path+":batchEmbedContents", struct {
		Requests []embedRequest `json:"requests"`
	}{reqs})
	if lerr != nil {
		return nil, lerr
	}
	defer resp.Body.Close()
	var out struct {
		Embeddings []*struct {
			Values []float32 `json:"values"`
		} `json:"embeddings"`
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, llm.FromTransport(ctx, e.p.name, err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, llm.Malformed(e.p.name, err)
	}
	vecs := make([][]float32, len(out.Embeddings))
	for i, emb := range out.Embeddings {
		if emb != nil {
			vecs[i] = emb.Values
		}
	}
	if err := llm.CheckEmbeddings(e.p.name, len(texts), e.dims, vecs); err != nil {
		return nil, err
	}
	return vecs, nil
}
