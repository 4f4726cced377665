// Command kbeval measures how well rein's knowledge base finds the files
// that answer a question (SPEC KB-4): it indexes each corpus into a kb
// backend, asks the corpus's labelled questions (questions/NAME.json) and
// prints recall@5, recall@10 and the mean reciprocal rank of each search
// mode, with the query latency (p50, p99) and the time indexing took.
//
// Corpora: goroot ($(go env GOROOT)/src) and docs (the Go specification,
// memory model, GODEBUG and assembler guides from $(go env GOROOT)/doc,
// and the Markdown documentation of five modules in the module cache,
// copied into a temporary directory). Questions are split in two halves
// by a hash of their id, fixed before any tuning: -split tune is the
// half ranking was tuned on, -split heldout (the default) the half it
// never saw, which the figures report.
//
// A question is found at the rank of the first of the search's distinct
// files (in hit order, the first ten) that is one of its labelled files.
// Modes: keyword (rein's keyword pass), hybrid (keyword and vectors fused;
// the vectors come from the mock vendor server's deterministic hash
// embedding, mockserver.Embed, called in-process: a stand-in that
// measures the plumbing and the fusion, not the quality of any model's
// vectors), and bm25file, the baseline: plain BM25 over whole files.
//
//	go run ./bench/kbeval                          # both corpora, held-out half
//	go run ./bench/kbeval -corpus docs -split tune -v
//	go run ./bench/kbeval -backend sqlite -modes keyword
//	go run ./bench/kbeval -backend postgres -postgres postgres://…
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/reinhq/rein/kb"
	"github.com/reinhq/rein/kb/kbtest"
	kbpostgres "github.com/reinhq/rein/kb/postgres"
	kbsqlite "github.com/reinhq/rein/kb/sqlite"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

// config is what the flags set.
type config struct {
	root, dir, backend, postgres, questions, split string
	keep                                           string
	corpora, modes                                 []string
	dim                                            int
	ranking                                        kb.Ranking
	weights                                        kb.Weights
	asJSON, verbose                                bool
	cpuprofile                                     string
}

// modeFile is the baseline mode: BM25 over whole files.
const modeFile = "bm25file"

// depth is how many distinct files of a search count: recall@10.
const depth = 10

func main() {
	var cfg config
	var modes, corpusNames string
	flag.StringVar(&corpusNames, "corpus", "goroot,docs", "the corpora to measure, comma-separated: goroot, docs")
	flag.StringVar(&cfg.split, "split", splitHeldOut, "the questions asked: heldout (never tuned on), tune, or all")
	flag.StringVar(&cfg.root, "root", "", "with -questions: the tree to index")
	flag.StringVar(&cfg.questions, "questions", "", "a questions file to ask over -root instead of the built-in corpora")
	flag.StringVar(&cfg.dir, "dir", ".", "index only this directory under the root (e.g. net/http); questions without a labelled file there are left out")
	flag.StringVar(&cfg.backend, "backend", "memory", "where the index lives: memory, sqlite (a file in a temporary directory) or postgres")
	flag.StringVar(&cfg.postgres, "postgres", os.Getenv("REIN_TEST_POSTGRES_URL"), "the database of -backend postgres (default $REIN_TEST_POSTGRES_URL); the run uses namespaces of its own and empties them at the end")
	flag.StringVar(&modes, "modes", "keyword,hybrid,bm25file", "the search modes to measure, comma-separated: keyword, hybrid, bm25file")
	flag.IntVar(&cfg.dim, "dim", mockserver.DefaultEmbedDim, "the dimension of the mock embeddings")
	flag.StringVar(&cfg.keep, "keep", "", "with -backend sqlite: keep the databases in this directory and reuse them on the next run (only changed files are indexed again; the index time is then that of the check)")
	flag.IntVar(&cfg.ranking.Candidates, "candidates", 0, "tuning: kb.Ranking.Candidates (0: the default)")
	flag.Float64Var(&cfg.ranking.Spread, "spread", 0, "tuning: kb.Ranking.Spread (0: the default)")
	flag.Float64Var(&cfg.ranking.Demote, "demote", 0, "tuning: kb.Ranking.Demote (0: the default)")
	flag.Float64Var(&cfg.ranking.Variant, "variant", 0, "tuning: kb.Ranking.Variant (0: the default)")
	flag.Float64Var(&cfg.ranking.PathBoost, "pathboost", 0, "tuning: kb.Ranking.PathBoost (0: the default; negative: off)")
	flag.Float64Var(&cfg.ranking.Coverage, "coverage", 0, "tuning: kb.Ranking.Coverage (0: the default; negative: off)")
	flag.Float64Var(&cfg.ranking.PackageBoost, "packageboost", 0, "tuning: kb.Ranking.PackageBoost (0: the default; negative: off)")
	flag.Float64Var(&cfg.ranking.Proximity, "proximity", 0, "tuning: kb.Ranking.Proximity (0: the default; negative: off)")
	flag.Float64Var(&cfg.weights.Keyword, "wkeyword", 0, "tuning: the keyword pass's weight in hybrid fusion (0: the default)")
	flag.Float64Var(&cfg.weights.Vector, "wvector", 0, "tuning: the vector pass's weight in hybrid fusion (0: the default)")
	flag.BoolVar(&cfg.asJSON, "json", false, "print the results as JSON")
	flag.BoolVar(&cfg.verbose, "v", false, "list the questions not found first, with where the first labelled file came")
	flag.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write CPU profiles of the searches (not the indexing) to PREFIX.CORPUS.MODE, for go tool pprof")
	flag.Parse()
	cfg.modes = strings.Split(modes, ",")
	cfg.corpora = strings.Split(corpusNames, ",")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "kbeval:", err)
		os.Exit(1)
	}
}

// Result is one mode's measurement on one corpus.
type Result struct {
	Corpus  string `json:"corpus"`
	Split   string `json:"split"`
	Mode    string `json:"mode"`
	Backend string `json:"backend"`
	Score
	IndexSeconds float64 `json:"index_seconds"`
	Files        int     `json:"files"`
	Chunks       int     `json:"chunks"`
	Skipped      int     `json:"skipped"`
	// QueryP50MS and QueryP99MS are the median and 99th percentile time
	// of a search, in milliseconds.
	QueryP50MS float64 `json:"query_p50_ms"`
	QueryP99MS float64 `json:"query_p99_ms"`
	// QueryCPUP50MS and QueryCPUP99MS are the same of a search's CPU
	// time (its thread's, on Linux; 0 elsewhere), which other work on
	// the machine inflates much less than the wall clock.
	QueryCPUP50MS float64 `json:"query_cpu_p50_ms"`
	QueryCPUP99MS float64 `json:"query_cpu_p99_ms"`
	// Ran counts the searches by the mode each said it ran (a hybrid
	// search falls back to keyword when embedding the query fails).
	Ran    map[string]int `json:"ran"`
	Misses []Miss         `json:"misses,omitempty"`
	// Ranks is each question's rank (0: not in the first ten files), by
	// id.
	Ranks map[string]int `json:"ranks"`
}

// Miss is a question not found first.
type Miss struct {
	ID       string   `json:"id"`
	Question string   `json:"question"`
	Rank     int      `json:"rank"` // 0: not in the first ten files
	Top      []string `json:"top"`  // the first files found
}

// job is one corpus to measure: its questions and how to get its tree.
type job struct {
	name  string
	qs    []Question
	build func() (string, func(), error)
}

func run(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	if !slices.Contains([]string{splitHeldOut, splitTune, splitAll}, cfg.split) {
		return fmt.Errorf("-split %q: want heldout, tune or all", cfg.split)
	}
	for _, mode := range cfg.modes {
		if mode != kb.ModeKeyword && mode != kb.ModeHybrid && mode != modeFile {
			return fmt.Errorf("-modes: unknown mode %q: want keyword, hybrid or bm25file", mode)
		}
	}
	jobs, err := plan(cfg)
	if err != nil {
		return err
	}
	var results []Result
	for _, j := range jobs {
		rs, err := measureCorpus(ctx, cfg, j, stderr)
		if err != nil {
			return fmt.Errorf("corpus %s: %w", j.name, err)
		}
		results = append(results, rs...)
	}
	if cfg.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	}
	printTable(stdout, results, cfg.verbose)
	return nil
}

// plan turns the flags into the corpora to measure, each with the
// questions of the split that have a labelled file under -dir.
func plan(cfg config) ([]job, error) {
	dir := filepath.ToSlash(filepath.Clean(cfg.dir))
	pick := func(name string, data []byte) ([]Question, error) {
		qs, err := parseQuestions(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if qs = within(splitOf(qs, cfg.split), dir); len(qs) == 0 {
			return nil, fmt.Errorf("%s: no question of the %s split has a labelled file under %s: choose a wider -dir", name, cfg.split, dir)
		}
		return qs, nil
	}
	if cfg.questions != "" {
		if cfg.root == "" {
			return nil, errors.New("-questions: set -root to the tree its files are relative to")
		}
		data, err := os.ReadFile(cfg.questions)
		if err != nil {
			return nil, err
		}
		qs, err := pick(cfg.questions, data)
		if err != nil {
			return nil, err
		}
		return []job{{name: filepath.Base(cfg.questions), qs: qs, build: func() (string, func(), error) { return cfg.root, func() {}, nil }}}, nil
	}
	var jobs []job
	for _, name := range cfg.corpora {
		i := slices.IndexFunc(corpora, func(c corpus) bool { return c.name == name })
		if i < 0 {
			return nil, fmt.Errorf("-corpus: unknown corpus %q: want goroot or docs", name)
		}
		data, err := questionFiles.ReadFile("questions/" + name + ".json")
		if err != nil {
			return nil, err
		}
		qs, err := pick(name, data)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, job{name: name, qs: qs, build: corpora[i].build})
	}
	return jobs, nil
}

// measureCorpus builds a corpus's tree and measures each mode on it.
func measureCorpus(ctx context.Context, cfg config, j job, stderr io.Writer) ([]Result, error) {
	root, cleanup, err := j.build()
	if err != nil {
		return nil, err
	}
	defer cleanup()
	var results []Result
	for _, mode := range cfg.modes {
		if mode == modeFile {
			continue // measured over the keyword mode's index
		}
		rs, err := measure(ctx, cfg, root, mode, j, stderr)
		if err != nil {
			return nil, fmt.Errorf("%s mode: %w", mode, err)
		}
		results = append(results, rs...)
	}
	if slices.Contains(cfg.modes, modeFile) && !slices.Contains(cfg.modes, kb.ModeKeyword) {
		rs, err := measure(ctx, cfg, root, modeFile, j, stderr)
		if err != nil {
			return nil, fmt.Errorf("%s mode: %w", modeFile, err)
		}
		results = append(results, rs...)
	}
	return results, nil
}

// measure indexes the tree in a new backend and asks every question in
// mode (and, from the keyword mode's index, in the baseline mode too
// when it is asked for).
func measure(ctx context.Context, cfg config, root, mode string, j job, stderr io.Writer) ([]Result, error) {
	be, cleanup, err := openBackend(ctx, cfg, j.name+"-"+mode)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	kcfg := kb.Config{Root: root, Backend: be, Ranking: cfg.ranking, Weights: cfg.weights}
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
		return nil, err
	}
	start := time.Now()
	rep, err := base.Add(ctx, []string{filepath.FromSlash(cfg.dir)}, progress(stderr, j.name+" "+mode))
	if err != nil {
		return nil, err
	}
	proto := Result{Corpus: j.name, Split: cfg.split, Mode: mode, Backend: cfg.backend, IndexSeconds: time.Since(start).Seconds(),
		Files: rep.Added + rep.Updated + rep.Unchanged, Chunks: rep.Chunks, Skipped: len(rep.Skipped)}
	var results []Result
	if mode != modeFile {
		stopProfile, err := startProfile(cfg.cpuprofile, j.name, mode)
		if err != nil {
			return nil, err
		}
		r, err := ask(j.qs, proto, func(q string) ([]string, string, error) {
			res, err := base.Search(ctx, q, kb.SearchOptions{TopK: kb.MaxTopK})
			if errors.Is(err, kb.ErrEmptyQuery) {
				return nil, "empty query", nil
			}
			if err != nil {
				return nil, "", err
			}
			docs := make([]string, len(res.Hits))
			for i, h := range res.Hits {
				docs[i] = h.Doc
			}
			return docs, res.Mode, nil
		})
		if perr := stopProfile(); err == nil {
			err = perr
		}
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	if mode == modeFile || mode == kb.ModeKeyword && slices.Contains(cfg.modes, modeFile) {
		x, err := newFileBM25(ctx, root, base)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", modeFile, err)
		}
		proto.Mode, proto.IndexSeconds = modeFile, 0
		r, err := ask(j.qs, proto, func(q string) ([]string, string, error) { return x.search(q, depth), modeFile, nil })
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	return results, nil
}

// ask asks every question of qs with search (which returns the documents
// of its hits, best first, and the mode the search says it ran) and
// scores the first ten distinct files.
func ask(qs []Question, r Result, search func(string) ([]string, string, error)) (Result, error) {
	ranks := make([]int, len(qs))
	r.Ranks = make(map[string]int, len(qs))
	times := make([]time.Duration, len(qs))
	var cpu []time.Duration
	// The search runs on this goroutine's thread (every backend's client
	// is Go code): its CPU time is the thread's.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for i, q := range qs {
		c0, cpuOK := kbtest.ThreadCPU()
		t0 := time.Now()
		docs, ran, err := search(q.Question)
		times[i] = time.Since(t0)
		if c1, ok := kbtest.ThreadCPU(); ok && cpuOK {
			cpu = append(cpu, c1-c0)
		}
		if err != nil {
			return Result{}, fmt.Errorf("question %s: %w", q.ID, err)
		}
		if r.Ran == nil {
			r.Ran = map[string]int{}
		}
		r.Ran[ran]++
		docs = distinct(docs, depth)
		ranks[i] = rankOf(q.Files, docs)
		r.Ranks[q.ID] = ranks[i]
		if ranks[i] != 1 {
			r.Misses = append(r.Misses, Miss{ID: q.ID, Question: q.Question, Rank: ranks[i], Top: docs[:min(3, len(docs))]})
		}
	}
	r.Score = score(ranks)
	r.QueryP50MS, r.QueryP99MS = percentile(times, 0.50), percentile(times, 0.99)
	r.QueryCPUP50MS, r.QueryCPUP99MS = percentile(cpu, 0.50), percentile(cpu, 0.99)
	return r, nil
}

// startProfile starts a CPU profile into prefix.corpus.mode and returns
// what stops it; with no prefix, nothing.
func startProfile(prefix, corpus, mode string) (func() error, error) {
	if prefix == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(prefix + "." + corpus + "." + mode)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// openBackend opens a new, empty backend for one mode and returns what
// closes (and, for PostgreSQL, empties) it.
func openBackend(ctx context.Context, cfg config, name string) (kb.Backend, func(), error) {
	switch cfg.backend {
	case "memory":
		m := kb.NewMemory()
		return m, func() { m.Close() }, nil
	case "sqlite":
		if cfg.keep != "" {
			if err := os.MkdirAll(cfg.keep, 0o755); err != nil {
				return nil, nil, err
			}
			s, err := kbsqlite.Open(filepath.Join(cfg.keep, name+".db"), kbsqlite.Options{})
			if err != nil {
				return nil, nil, err
			}
			return s, func() { s.Close() }, nil
		}
		dir, err := os.MkdirTemp("", "kbeval-")
		if err != nil {
			return nil, nil, err
		}
		s, err := kbsqlite.Open(filepath.Join(dir, name+".db"), kbsqlite.Options{})
		if err != nil {
			os.RemoveAll(dir)
			return nil, nil, err
		}
		return s, func() { s.Close(); os.RemoveAll(dir) }, nil
	case "postgres":
		if cfg.postgres == "" {
			return nil, nil, errors.New("-backend postgres: set -postgres (or $REIN_TEST_POSTGRES_URL) to a database URL")
		}
		ns := fmt.Sprintf("kbeval-%s-%d-%d", name, os.Getpid(), time.Now().UnixNano())
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
	fmt.Fprintf(w, "%-7s %-8s %-8s %-8s %9s %9s %10s %6s %9s %9s %9s %9s %9s %6s %7s\n",
		"corpus", "split", "mode", "backend", "questions", "recall@5", "recall@10", "MRR", "query p50", "query p99", "cpu p50", "cpu p99", "index", "files", "chunks")
	for _, r := range results {
		fmt.Fprintf(w, "%-7s %-8s %-8s %-8s %9d %9.3f %10.3f %6.3f %7.2fms %7.2fms %7.2fms %7.2fms %8.1fs %6d %7d\n",
			r.Corpus, r.Split, r.Mode, r.Backend, r.Questions, r.Recall5, r.Recall10, r.MRR, r.QueryP50MS, r.QueryP99MS,
			r.QueryCPUP50MS, r.QueryCPUP99MS, r.IndexSeconds, r.Files, r.Chunks)
	}
	for _, r := range results {
		if r.Mode == kb.ModeHybrid && r.Ran[kb.ModeHybrid] != r.Questions {
			fmt.Fprintf(w, "note: %s hybrid: only %d of %d searches ran hybrid (%v)\n", r.Corpus, r.Ran[kb.ModeHybrid], r.Questions, r.Ran)
		}
	}
	if !verbose {
		return
	}
	for _, r := range results {
		fmt.Fprintf(w, "\n%s %s: searches ran as %v; not first (%d):\n", r.Corpus, r.Mode, r.Ran, len(r.Misses))
		for _, m := range r.Misses {
			rank := "not found"
			if m.Rank > 0 {
				rank = fmt.Sprintf("rank %d", m.Rank)
			}
			fmt.Fprintf(w, "  %-28s %-10s %s\n  %28s top: %s\n", m.ID, rank, m.Question, "", strings.Join(m.Top, ", "))
		}
	}
}
