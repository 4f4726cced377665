package llm

import (
	"context"
	"fmt"
	"math"
	"time"
)

// Embedder turns texts into vectors for similarity search (SPEC KB-1).
//
// Embed returns exactly one vector per text, in the order of texts, all of
// one dimension (> 0); no texts means no vectors and no request. A failure
// is an *Error classified like a chat failure (a 429 is KindRateLimit with
// the vendor's RetryAfter, a 401 KindAuth, a reply that does not hold one
// vector per text of one dimension KindMalformed), and no partial result is
// returned. An adapter splits texts into requests within its vendor's
// limits itself ([EmbedBatched]); [RetryingEmbedder] adds rein's retry
// policy on top. Implementations are safe for concurrent use.
//
// kb.Embedder has the same method set, so every Embedder is one.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// EmbedderFunc adapts a function to [Embedder].
type EmbedderFunc func(ctx context.Context, texts []string) ([][]float32, error)

// Embed calls f.
func (f EmbedderFunc) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return f(ctx, texts)
}

// QueryEmbedder is implemented by an Embedder whose vendor embeds a search
// query differently from a document (Gemini's RETRIEVAL_QUERY task type).
// Embed is for the documents; EmbedQuery for what is searched with.
type QueryEmbedder interface {
	Embedder
	// EmbedQuery returns the vector of one search query, of the dimension
	// Embed returns.
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}

// EmbedQuery returns the vector of a search query: through e's EmbedQuery
// when e is a [QueryEmbedder], else as a one-text Embed.
func EmbedQuery(ctx context.Context, e Embedder, text string) ([]float32, error) {
	if q, ok := e.(QueryEmbedder); ok {
		return q.EmbedQuery(ctx, text)
	}
	vecs, err := e.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	if len(vecs) != 1 {
		return nil, &Error{Kind: KindMalformed, Message: fmt.Sprintf("embedding: %d vectors for 1 text", len(vecs))}
	}
	return vecs[0], nil
}

// EmbedLimits bounds one embedding request: at most MaxTexts texts and
// MaxBytes bytes of text in all. Zero means no bound.
type EmbedLimits struct {
	MaxTexts int
	MaxBytes int
}

// EmbedLimiter is implemented by an Embedder whose vendor bounds a request.
// [RetryingEmbedder] uses it to retry one request's worth of texts at a
// time, not the whole input.
type EmbedLimiter interface {
	EmbedLimits() EmbedLimits
}

// EmbedBatched cuts texts into consecutive batches within limits, embeds
// each through embed, one after the other, and returns the vectors in the
// order of texts. A text larger than MaxBytes goes alone in its batch (the
// vendor decides whether it fits). Every batch must return one vector per
// text, all batches of one dimension; otherwise the result is a
// KindMalformed *Error naming provider. The first failure ends the call
// and no vectors are returned.
func EmbedBatched(ctx context.Context, provider string, texts []string, limits EmbedLimits,
	embed func(ctx context.Context, batch []string) ([][]float32, error)) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); {
		end := batchEnd(texts, start, limits)
		if err := ctx.Err(); err != nil {
			return nil, FromTransport(ctx, provider, err)
		}
		vecs, err := embed(ctx, texts[start:end])
		if err != nil {
			return nil, err
		}
		if err := CheckEmbeddings(provider, end-start, 0, vecs); err != nil {
			return nil, err
		}
		if len(out) > 0 && len(vecs[0]) != len(out[0]) {
			return nil, &Error{Kind: KindMalformed, Provider: provider, Message: fmt.Sprintf(
				"embedding: texts %d… came back with %d dimensions, earlier ones with %d", start, len(vecs[0]), len(out[0]))}
		}
		out = append(out, vecs...)
		start = end
	}
	return out, nil
}

// batchEnd returns the end of the batch that starts at texts[start].
func batchEnd(texts []string, start int, l EmbedLimits) int {
	end, size := start, 0
	for end < len(texts) {
		if l.MaxTexts > 0 && end-start >= l.MaxTexts {
			break
		}
		n := len(texts[end])
		if l.MaxBytes > 0 && end > start && size+n > l.MaxBytes {
			break
		}
		size += n
		end++
	}
	return end
}

// CheckEmbeddings checks a reply of provider to n texts: n vectors, each of
// the same non-zero dimension — dims when dims > 0 — holding finite numbers.
// A violation is a KindMalformed *Error saying what was wrong.
func CheckEmbeddings(provider string, n, dims int, vecs [][]float32) error {
	bad := func(format string, args ...any) error {
		return &Error{Kind: KindMalformed, Provider: provider, Message: "embedding: " + fmt.Sprintf(format, args...)}
	}
	if len(vecs) != n {
		return bad("%d vectors for %d texts", len(vecs), n)
	}
	for i, v := range vecs {
		switch {
		case len(v) == 0:
			return bad("vector %d is empty", i)
		case dims > 0 && len(v) != dims:
			return bad("vector %d has %d dimensions, %d were asked for", i, len(v), dims)
		case len(v) != len(vecs[0]):
			return bad("vector %d has %d dimensions, vector 0 has %d", i, len(v), len(vecs[0]))
		}
		for j, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return bad("vector %d holds %v at %d", i, x, j)
			}
		}
	}
	return nil
}

// RetryingEmbedder wraps e with policy (SPEC PROV-7): a retryable failure
// ([Error.Retryable]) is tried again after [RetryPolicy.Backoff] — the
// vendor's retry-after when it gave one — and anything else is returned at
// once. When e is an [EmbedLimiter] the texts are cut into e's requests
// first, so a retry repeats one request, not the whole input. The result
// is a [QueryEmbedder] whose EmbedQuery retries e's the same way.
func RetryingEmbedder(e Embedder, policy RetryPolicy) QueryEmbedder {
	return &retryingEmbedder{e: e, policy: policy.withDefaults()}
}

type retryingEmbedder struct {
	e      Embedder
	policy RetryPolicy
}

func (r *retryingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	var limits EmbedLimits
	if l, ok := r.e.(EmbedLimiter); ok {
		limits = l.EmbedLimits()
	}
	return EmbedBatched(ctx, "", texts, limits, func(ctx context.Context, batch []string) ([][]float32, error) {
		var out [][]float32
		err := r.retry(ctx, func() error {
			var err error
			out, err = r.e.Embed(ctx, batch)
			return err
		})
		return out, err
	})
}

func (r *retryingEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	var out []float32
	err := r.retry(ctx, func() error {
		var err error
		out, err = EmbedQuery(ctx, r.e, text)
		return err
	})
	return out, err
}

// EmbedLimits passes on e's limits.
func (r *retryingEmbedder) EmbedLimits() EmbedLimits {
	if l, ok := r.e.(EmbedLimiter); ok {
		return l.EmbedLimits()
	}
	return EmbedLimits{}
}

// retry calls try until it succeeds, fails for good, or the policy gives up.
func (r *retryingEmbedder) retry(ctx context.Context, try func() error) error {
	start := time.Now()
	for attempt := 1; ; attempt++ {
		err := try()
		if err == nil {
			return nil
		}
		e := FromTransport(ctx, "", err)
		if ctx.Err() != nil || !e.Retryable() || attempt >= r.policy.MaxAttempts {
			return err
		}
		delay := r.policy.Backoff(attempt, e)
		if time.Since(start)+delay > r.policy.Budget {
			return err
		}
		if err := sleep(ctx, delay); err != nil {
			return FromTransport(ctx, e.Provider, err)
		}
	}
}
