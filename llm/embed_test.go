package llm_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/llm"
)

// vecOf is a fake embedding: the text's length and its first byte.
func vecOf(s string) []float32 {
	first := float32(0)
	if s != "" {
		first = float32(s[0])
	}
	return []float32{float32(len(s)), first}
}

// lenEmbedder embeds with vecOf and records each call's batch.
type lenEmbedder struct {
	mu      sync.Mutex
	limits  llm.EmbedLimits
	batches [][]string
	fails   []error // returned by the first calls, one each
}

func (e *lenEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.batches = append(e.batches, append([]string(nil), texts...))
	if len(e.fails) > 0 {
		err := e.fails[0]
		e.fails = e.fails[1:]
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = vecOf(t)
	}
	return out, nil
}

func (e *lenEmbedder) EmbedLimits() llm.EmbedLimits { return e.limits }

type queryEmbedder struct{ *lenEmbedder }

func (q queryEmbedder) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	return []float32{-1, float32(len(text))}, nil
}

func TestEmbedBatched(t *testing.T) {
	texts := []string{"aa", "bbbb", "c", "dddddddd", "ee", "f"}
	tests := []struct {
		name   string
		limits llm.EmbedLimits
		want   [][]string
	}{
		{"no limits", llm.EmbedLimits{}, [][]string{texts}},
		{"by count", llm.EmbedLimits{MaxTexts: 4}, [][]string{texts[:4], texts[4:]}},
		{"by bytes", llm.EmbedLimits{MaxBytes: 7}, [][]string{{"aa", "bbbb", "c"}, {"dddddddd"}, {"ee", "f"}}},
		{"both", llm.EmbedLimits{MaxTexts: 2, MaxBytes: 6}, [][]string{{"aa", "bbbb"}, {"c"}, {"dddddddd"}, {"ee", "f"}}},
		{"one each", llm.EmbedLimits{MaxTexts: 1}, [][]string{{"aa"}, {"bbbb"}, {"c"}, {"dddddddd"}, {"ee"}, {"f"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &lenEmbedder{}
			got, err := llm.EmbedBatched(t.Context(), "fake", texts, tt.limits, e.Embed)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, e.batches); diff != "" {
				t.Errorf("batches (-want +got):\n%s", diff)
			}
			var want [][]float32
			for _, s := range texts {
				want = append(want, vecOf(s))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("vectors not in order (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEmbedBatchedEmpty(t *testing.T) {
	e := &lenEmbedder{}
	got, err := llm.EmbedBatched(t.Context(), "fake", nil, llm.EmbedLimits{MaxTexts: 1}, e.Embed)
	if err != nil || got != nil || len(e.batches) != 0 {
		t.Fatalf("got %v, %v after %d calls; want nothing and no call", got, err, len(e.batches))
	}
}

func TestEmbedBatchedRefusesBadReplies(t *testing.T) {
	tests := []struct {
		name  string
		reply func(batch []string) [][]float32
		want  string
	}{
		{"too few", func(b []string) [][]float32 { return [][]float32{{1}} }, "1 vectors for 2 texts"},
		{"mixed in a batch", func(b []string) [][]float32 { return [][]float32{{1, 2}, {1}} }, "vector 1 has 1 dimensions, vector 0 has 2"},
		{"empty vector", func(b []string) [][]float32 { return [][]float32{{}, {}} }, "vector 0 is empty"},
		{"NaN", func(b []string) [][]float32 { return [][]float32{{1}, {float32(math.NaN())}} }, "vector 1 holds NaN"},
		{"mixed across batches", func(b []string) [][]float32 {
			if b[0] == "a" {
				return [][]float32{{1, 2}, {1, 2}}
			}
			return [][]float32{{1}, {1}}
		}, "texts 2… came back with 1 dimensions, earlier ones with 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := llm.EmbedBatched(t.Context(), "fake", []string{"a", "b", "c", "d"}, llm.EmbedLimits{MaxTexts: 2},
				func(_ context.Context, b []string) ([][]float32, error) { return tt.reply(b), nil })
			if llm.KindOf(err) != llm.KindMalformed || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v; want a malformed error saying %q", err, tt.want)
			}
		})
	}
}

func TestCheckEmbeddingsDims(t *testing.T) {
	if err := llm.CheckEmbeddings("x", 1, 3, [][]float32{{1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	err := llm.CheckEmbeddings("x", 1, 4, [][]float32{{1, 2, 3}})
	if llm.KindOf(err) != llm.KindMalformed || !strings.Contains(err.Error(), "3 dimensions, 4 were asked for") {
		t.Fatalf("err = %v", err)
	}
}

func TestEmbedderFuncAndQuery(t *testing.T) {
	var e llm.Embedder = llm.EmbedderFunc(func(_ context.Context, texts []string) ([][]float32, error) {
		return [][]float32{vecOf(texts[0])}, nil
	})
	v, err := llm.EmbedQuery(t.Context(), e, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(vecOf("hello"), v); diff != "" {
		t.Error(diff)
	}
	q := queryEmbedder{&lenEmbedder{}}
	v, err = llm.EmbedQuery(t.Context(), q, "hello")
	if err != nil || v[0] != -1 {
		t.Fatalf("a QueryEmbedder's EmbedQuery was not used: %v, %v", v, err)
	}
	bad := llm.EmbedderFunc(func(context.Context, []string) ([][]float32, error) { return nil, nil })
	if _, err := llm.EmbedQuery(t.Context(), bad, "x"); llm.KindOf(err) != llm.KindMalformed {
		t.Fatalf("no vector: err = %v; want malformed", err)
	}
}

func embedRateLimited(after time.Duration) error {
	return &llm.Error{Kind: llm.KindRateLimit, Provider: "fake", Status: 429, RetryAfter: after}
}

func TestRetryingEmbedder(t *testing.T) {
	noJitter := func() float64 { return 0 }
	tests := []struct {
		name      string
		fails     []error
		policy    llm.RetryPolicy
		wantKind  llm.ErrorKind // KindUnknown: success
		wantCalls int
		wantWait  time.Duration
	}{
		{"success", nil, llm.RetryPolicy{}, llm.KindUnknown, 2, 0},
		{"429 honours retry-after", []error{embedRateLimited(7 * time.Second)}, llm.RetryPolicy{Jitter: noJitter},
			llm.KindUnknown, 3, 7 * time.Second},
		{"500 backs off", []error{&llm.Error{Kind: llm.KindServer, Status: 500}, &llm.Error{Kind: llm.KindServer, Status: 500}},
			llm.RetryPolicy{Initial: time.Second, Jitter: noJitter}, llm.KindUnknown, 4, 500*time.Millisecond + time.Second},
		{"401 not retried", []error{&llm.Error{Kind: llm.KindAuth, Status: 401}}, llm.RetryPolicy{}, llm.KindAuth, 1, 0},
		{"400 not retried", []error{&llm.Error{Kind: llm.KindBadRequest, Status: 400}}, llm.RetryPolicy{}, llm.KindBadRequest, 1, 0},
		{"gives up after MaxAttempts", []error{embedRateLimited(time.Second), embedRateLimited(time.Second), embedRateLimited(time.Second)},
			llm.RetryPolicy{MaxAttempts: 2}, llm.KindRateLimit, 2, time.Second},
		{"retry-after beyond the budget", []error{embedRateLimited(time.Hour)}, llm.RetryPolicy{}, llm.KindRateLimit, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inner := &lenEmbedder{limits: llm.EmbedLimits{MaxTexts: 2}, fails: tt.fails}
				e := llm.RetryingEmbedder(inner, tt.policy)
				start := time.Now()
				got, err := e.Embed(t.Context(), []string{"a", "bb", "ccc"})
				if k := llm.KindOf(err); k != tt.wantKind {
					t.Fatalf("err = %v (kind %v); want kind %v", err, k, tt.wantKind)
				}
				if err == nil {
					want := [][]float32{vecOf("a"), vecOf("bb"), vecOf("ccc")}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("vectors (-want +got):\n%s", diff)
					}
				}
				if len(inner.batches) != tt.wantCalls {
					t.Errorf("%d calls; want %d: %q", len(inner.batches), tt.wantCalls, inner.batches)
				}
				if waited := time.Since(start); waited != tt.wantWait {
					t.Errorf("waited %v; want %v", waited, tt.wantWait)
				}
			})
		})
	}
}

// A retry repeats the failed request only, not the batches before it.
func TestRetryingEmbedderRetriesOneBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &lenEmbedder{limits: llm.EmbedLimits{MaxTexts: 1}}
		calls := 0
		flaky := llm.EmbedderFunc(func(ctx context.Context, texts []string) ([][]float32, error) {
			calls++
			if calls == 2 {
				return nil, embedRateLimited(time.Second)
			}
			return inner.Embed(ctx, texts)
		})
		e := llm.RetryingEmbedder(limited{flaky, inner.limits}, llm.RetryPolicy{})
		if _, err := e.Embed(t.Context(), []string{"a", "b", "c"}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([][]string{{"a"}, {"b"}, {"c"}}, inner.batches); diff != "" {
			t.Errorf("batches (-want +got):\n%s", diff)
		}
		if calls != 4 {
			t.Errorf("%d calls; want 4 (a, b failed, b, c)", calls)
		}
	})
}

type limited struct {
	llm.Embedder
	l llm.EmbedLimits
}

func (l limited) EmbedLimits() llm.EmbedLimits { return l.l }

func TestRetryingEmbedderQuery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &lenEmbedder{fails: []error{embedRateLimited(time.Second)}}
		e := llm.RetryingEmbedder(inner, llm.RetryPolicy{})
		v, err := llm.EmbedQuery(t.Context(), e, "abc")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(vecOf("abc"), v); diff != "" {
			t.Error(diff)
		}
		if got := e.(llm.EmbedLimiter).EmbedLimits(); got != (llm.EmbedLimits{}) {
			t.Errorf("limits = %+v", got)
		}
	})
}

func TestRetryingEmbedderCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		inner := &lenEmbedder{fails: []error{embedRateLimited(time.Minute)}}
		e := llm.RetryingEmbedder(inner, llm.RetryPolicy{})
		go func() { time.Sleep(time.Second); cancel() }()
		_, err := e.Embed(ctx, []string{"a"})
		if llm.KindOf(err) != llm.KindCancelled || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v; want cancelled", err)
		}
	})
}

func BenchmarkEmbedBatched(b *testing.B) {
	texts := make([]string, 10_000)
	for i := range texts {
		texts[i] = fmt.Sprintf("chunk %d of some document", i)
	}
	e := &lenEmbedder{}
	b.ReportAllocs()
	for b.Loop() {
		e.batches = e.batches[:0]
		if _, err := llm.EmbedBatched(b.Context(), "fake", texts, llm.EmbedLimits{MaxTexts: 2048, MaxBytes: 1 << 19}, e.Embed); err != nil {
			b.Fatal(err)
		}
	}
}
