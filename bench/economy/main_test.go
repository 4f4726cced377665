package main

import (
	"context"
	"log/slog"
	"os/exec"
	"sync"
	"testing"
)

// rewriteLines keeps the compactor's "compact: prefix rewrite" records.
type rewriteLines struct {
	mu   sync.Mutex
	recs []map[string]slog.Value
}

func (h *rewriteLines) Enabled(_ context.Context, l slog.Level) bool { return true }
func (h *rewriteLines) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *rewriteLines) WithGroup(string) slog.Handler                { return h }
func (h *rewriteLines) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "compact: prefix rewrite" {
		return nil
	}
	attrs := map[string]slog.Value{"level": slog.StringValue(r.Level.String())}
	r.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value; return true })
	h.mu.Lock()
	h.recs = append(h.recs, attrs)
	h.mu.Unlock()
	return nil
}

// CTX-5 (issue 30 item 5): on the benchmark's own scenarios, through the
// real loop, compactor, read_file and bash, the cached prefix is rewritten
// in few large steps — at most maxRewrites times and never twice within
// minGap requests — and the compactor's debug log has one line per
// rewrite, naming the message and block where the cache breaks.
func TestRewritesCTX5(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("environment: bash is not installed; the scenarios run it")
	}
	cases := []struct {
		scenario            scenario
		window              int
		maxRewrites, minGap int
	}{
		{scenarios[0], 200_000, 0, 0},
		{scenarios[1], 200_000, 4, 7},
		{scenarios[2], 200_000, 0, 0},
		{scenarios[0], 128_000, 1, 0},
		{scenarios[1], 128_000, 8, 4},
	}
	for _, tt := range cases {
		t.Run(tt.scenario.name+" "+map[int]string{200_000: "200k", 128_000: "128k"}[tt.window], func(t *testing.T) {
			logs := &rewriteLines{}
			r, err := run(tt.scenario, tt.window, slog.New(logs))
			if err != nil {
				t.Fatal(err)
			}
			breaks := r.meter.Breaks
			t.Logf("%.0fk cache-priced, %d rewrites: %v", r.meter.Priced()/1000, len(breaks), r.breaks)
			if len(breaks) > tt.maxRewrites {
				t.Errorf("%d prefix rewrites, want at most %d", len(breaks), tt.maxRewrites)
			}
			for i := 1; i < len(breaks); i++ {
				if gap := breaks[i].Request - breaks[i-1].Request; gap < tt.minGap {
					t.Errorf("rewrites at requests %d and %d, want at least %d apart", breaks[i-1].Request, breaks[i].Request, tt.minGap)
				}
			}
			if len(logs.recs) != len(breaks) {
				t.Fatalf("%d rewrite log lines for %d prefix breaks: %v", len(logs.recs), len(breaks), logs.recs)
			}
			for i, br := range breaks {
				rec := logs.recs[i]
				if rec["level"].String() != "DEBUG" || rec["first_message"].Int64() != int64(br.Message) || rec["first_block"].Int64() != int64(br.Block) || rec["why"].String() == "" {
					t.Errorf("break %+v logged as %v", br, rec)
				}
			}
		})
	}
}
