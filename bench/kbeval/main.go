// Command kbeval measures how well rein's knowledge base finds the code
// that answers a Go programmer's question: it indexes the Go standard
// library's source ($(go env GOROOT)/src, or a part of it with -dir) into
// a kb backend, asks the labelled questions of questions.json, and prints
// recall@5, recall@10 and the mean reciprocal rank of each search mode
// (keyword only, and hybrid with vectors), with the time indexing took.
//
// A question is found at the rank of the first hit in any of its labelled
// files. The hybrid mode's vectors come from the mock vendor server's
// deterministic embedding (mockserver.Embed, called in-process): a
// stand-in for a real model that measures the plumbing and the fusion,
// not the quality of any vendor's vectors.
//
//	go run ./bench/kbeval                      # everything, in memory
//	go run ./bench/kbeval -dir net/http -v     # a part, listing misses
//	go run ./bench/kbeval -backend postgres -postgres postgres://…
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reinhq/rein/kb"
	kbpostgres "github.com/reinhq/rein/kb/postgres"
	kbsqlite "github.com/reinhq/rein/kb/sqlite"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

//go:embed questions.json
var questionsJSON []byte

// config is what the flags set.
type config struct {
	root, dir, backend, postgres, questions string
	modes                                   []string
	k, dim                                  int
	asJSON, verbose                         bool
}

func main() {
	var cfg config
	var modes string
	flag.StringVar(&cfg.root, "root", "", "the tree to index (default: $(go env GOROOT)/src)")
	flag.StringVar(&cfg.dir, "dir", ".", "index only this directory under the root (e.g. net/http); questions without a labelled file there are left out")
	flag.StringVar(&cfg.backend, "backend", "memory", "where the index lives: memory, sqlite (a file in a temporary directory) or postgres")
	flag.StringVar(&cfg.postgres, "postgres", os.Getenv("REIN_TEST_POSTGRES_URL"), "the database of -backend postgres (default $REIN_TEST_POSTGRES_URL); the run uses namespaces of its own and empties them at the end")
	flag.StringVar(&modes, "modes", "keyword,hybrid", "the search modes to measure, comma-separated: keyword, hybrid")
	flag.StringVar(&cfg.questions, "questions", "", "a questions file instead of the built-in questions.json")
	flag.IntVar(&cfg.k, "k", 10, "hits asked of each search (at most kb.MaxTopK)")
	flag.IntVar(&cfg.dim, "dim", mockserver.DefaultEmbedDim, "the dimension of the mock embeddings")
	flag.BoolVar(&cfg.asJSON, "json", false, "print the results as JSON")
	flag.BoolVar(&cfg.verbose, "v", false, "list the questions not found in the top 5, with where the first labelled hit came")
	flag.Parse()
	cfg.modes = strings.Split(modes, ",")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "kbeval:", err)
		os.Exit(1)
	}
}

// Result is one mode's measurement.
type Result struct {
	Mode    string `json:"mode"`
	Backend string `json:"backend"`
	Score
	IndexSeconds float64 `json:"index_seconds"`
	Files        int     `json:"files"`
	Chunks       int     `json:"chunks"`
	Skipped      int     `json:"skipped"`
	// QueryP50MS is the median time of a search, in milliseconds.
	QueryP50MS float64 `json:"query_p50_ms"`
	Misses     []Miss  `json:"misses,omitempty"`
}

// Miss is a question not found in the top 5.
type Miss struct {
	ID       string   `json:"id"`
	Question string   `json:"question"`
	Rank     int      `json:"rank"` // 0: not in the hits at all
	Top      []string `json:"top"`  // the first hits' documents
}

func run(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	qs, err := loadQuestions(cfg)
	if err != nil {
		return err
	}
	if cfg.root == "" {
		if cfg.root, err = goroot(); err != nil {
			return err
		}
	}
	cfg.dir = filepath.ToSlash(filepath.Clean(cfg.dir))
	if qs = within(qs, cfg.dir); len(qs) == 0 {
		return fmt.Errorf("no question has a labelled file under %s: choose a wider -dir", cfg.dir)
	}
	if cfg.k < 1 || cfg.k > kb.MaxTopK {
		return fmt.Errorf("-k %d: want 1 to %d", cfg.k, kb.MaxTopK)
	}
	var results []Result
	for _, mode := range cfg.modes {
		if mode != kb.ModeKeyword && mode != kb.ModeHybrid {
			return fmt.Errorf("-modes: unknown mode %q: want keyword or hybrid", mode)
		}
		r, err := measure(ctx, cfg, mode, qs, stderr)
		if err != nil {
			return fmt.Errorf("%s mode: %w", mode, err)
		}
		results = append(results, r)
	}
	if cfg.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	}
	printTable(stdout, results, cfg.verbose)
	return nil
}

// loadQuestions reads the built-in questions or -questions.
func loadQuestions(cfg config) ([]Question, error) {
	data := questionsJSON
	if cfg.questions != "" {
		var err error
		if data, err = os.ReadFile(cfg.questions); err != nil {
			return nil, err
		}
	}
	return parseQuestions(data)
}

// goroot returns $(go env GOROOT)/src.
func goroot() (string, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOROOT: %w (or pass -root)", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "src"), nil
}

// measure indexes the tree in a new backend and asks every question.
func measure(ctx context.Context, cfg config, mode string, qs []Question, stderr io.Writer) (Result, error) {
	be, cleanup, err := openBackend(ctx, cfg, mode)
	if err != nil {
		return Result{}, err
	}
	defer cleanup()
	kcfg := kb.Config{Root: cfg.root, Backend: be}
	if mode == kb.ModeHybrid {
		dim := cfg.dim
		kcfg.Embedder = llm.EmbedderFunc(func(_ context.Context, texts []string) ([][]float32, error) {
			out := make([][]float32, len(texts))
			for i, t := range texts {
				out[i] = mockserver.Embed(t, dim)
			}
			return out, nil
		})
		kcfg.EmbeddingModel = fmt.Sprintf("mock/hash-%d", dim)
	}
	base, err := kb.New(kcfg)
	if err != nil {
		return Result{}, err
	}
	start := time.Now()
	rep, err := base.Add(ctx, []string{cfg.dir}, progress(stderr, mode))
	if err != nil {
		return Result{}, err
	}
	r := Result{Mode: mode, Backend: cfg.backend, IndexSeconds: time.Since(start).Seconds(),
		Files: rep.Added + rep.Updated + rep.Unchanged, Chunks: rep.Chunks, Skipped: len(rep.Skipped)}
	ranks := make([]int, len(qs))
	times := make([]time.Duration, len(qs))
	for i, q := range qs {
		t0 := time.Now()
		res, err := base.Search(ctx, q.Question, kb.SearchOptions{TopK: cfg.k})
		times[i] = time.Since(t0)
		var docs []string
		switch {
		case errors.Is(err, kb.ErrEmptyQuery):
		case err != nil:
			return Result{}, fmt.Errorf("question %s: %w", q.ID, err)
		default:
			for _, h := range res.Hits {
				docs = append(docs, h.Doc)
			}
		}
		ranks[i] = rankOf(q.Files, docs)
		if ranks[i] == 0 || ranks[i] > 5 {
			r.Misses = append(r.Misses, Miss{ID: q.ID, Question: q.Question, Rank: ranks[i], Top: docs[:min(3, len(docs))]})
		}
	}
	r.Score = score(ranks)
	slices.Sort(times)
	r.QueryP50MS = float64(times[len(times)/2].Microseconds()) / 1000
	return r, nil
}

// openBackend opens a new, empty backend for one mode and returns what
// closes (and, for PostgreSQL, empties) it.
func openBackend(ctx context.Context, cfg config, mode string) (kb.Backend, func(), error) {
	switch cfg.backend {
	case "memory":
		m := kb.NewMemory()
		return m, func() { m.Close() }, nil
	case "sqlite":
		dir, err := os.MkdirTemp("", "kbeval-")
		if err != nil {
			return nil, nil, err
		}
		s, err := kbsqlite.Open(filepath.Join(dir, mode+".db"), kbsqlite.Options{})
		if err != nil {
			os.RemoveAll(dir)
			return nil, nil, err
		}
		return s, func() { s.Close(); os.RemoveAll(dir) }, nil
	case "postgres":
		if cfg.postgres == "" {
			return nil, nil, errors.New("-backend postgres: set -postgres (or $REIN_TEST_POSTGRES_URL) to a database URL")
		}
		ns := fmt.Sprintf("kbeval-%s-%d-%d", mode, os.Getpid(), time.Now().UnixNano())
		s, err := kbpostgres.Open(ctx, cfg.postgres, kbpostgres.Options{Namespace: ns})
		if err != nil {
			return nil, nil, err
		}
		return s, func() {
			if err := s.Drop(context.WithoutCancel(ctx)); err != nil {
				fmt.Fprintln(os.Stderr, "kbeval:", err)
			}
			s.Close()
		}, nil
	}
	return nil, nil, fmt.Errorf("-backend %q: want memory, sqlite or postgres", cfg.backend)
}

// progress reports an indexing run on w every few seconds.
func progress(w io.Writer, mode string) func(kb.Progress) {
	var last time.Time
	return func(p kb.Progress) {
		if time.Since(last) < 3*time.Second && p.Done < p.Total {
			return
		}
		last = time.Now()
		fmt.Fprintf(w, "kbeval: %s: indexed %d of %d files (%d MB)\n", mode, p.Done, p.Total, p.Bytes>>20)
	}
}

// printTable prints the results, and with verbose the misses.
func printTable(w io.Writer, results []Result, verbose bool) {
	fmt.Fprintf(w, "%-8s %-8s %9s %9s %10s %6s %9s %6s %7s %9s\n",
		"mode", "backend", "questions", "recall@5", "recall@10", "MRR", "index", "files", "chunks", "query p50")
	for _, r := range results {
		fmt.Fprintf(w, "%-8s %-8s %9d %9.3f %10.3f %6.3f %8.1fs %6d %7d %7.1fms\n",
			r.Mode, r.Backend, r.Questions, r.Recall5, r.Recall10, r.MRR, r.IndexSeconds, r.Files, r.Chunks, r.QueryP50MS)
	}
	if !verbose {
		return
	}
	for _, r := range results {
		fmt.Fprintf(w, "\n%s: not in the top 5 (%d):\n", r.Mode, len(r.Misses))
		for _, m := range r.Misses {
			rank := "not found"
			if m.Rank > 0 {
				rank = fmt.Sprintf("rank %d", m.Rank)
			}
			fmt.Fprintf(w, "  %-28s %-10s %s\n  %28s top: %s\n", m.ID, rank, m.Question, "", strings.Join(m.Top, ", "))
		}
	}
}
