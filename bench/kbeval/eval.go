package main

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"path"
	"slices"
	"strings"
	"time"
)

// Question is one labelled question of a questions file: the files
// (paths relative to the corpus's root) whose text answers it.
type Question struct {
	ID       string   `json:"id"`
	Question string   `json:"question"`
	Files    []string `json:"files"`
}

// parseQuestions reads a questions file: ids unique, each question with a
// text and at least one file, given as a clean relative path.
func parseQuestions(data []byte) ([]Question, error) {
	var qs []Question
	if err := json.Unmarshal(data, &qs); err != nil {
		return nil, fmt.Errorf("questions: %w", err)
	}
	seen := map[string]bool{}
	for i, q := range qs {
		switch {
		case q.ID == "" || seen[q.ID]:
			return nil, fmt.Errorf("questions: #%d: want a unique, non-empty id (got %q)", i+1, q.ID)
		case strings.TrimSpace(q.Question) == "":
			return nil, fmt.Errorf("questions: %s: the question is empty", q.ID)
		case len(q.Files) == 0:
			return nil, fmt.Errorf("questions: %s: no labelled file", q.ID)
		}
		for _, f := range q.Files {
			if f == "" || path.Clean(f) != f || path.IsAbs(f) || f == ".." || strings.HasPrefix(f, "../") {
				return nil, fmt.Errorf("questions: %s: file %q: want a clean path relative to the corpus root", q.ID, f)
			}
		}
		seen[q.ID] = true
	}
	return qs, nil
}

// rankOf is the 1-based rank of the first of docs (the documents of a
// search's hits, best first) that is one of files; 0 when none is.
func rankOf(files, docs []string) int {
	for i, d := range docs {
		if slices.Contains(files, d) {
			return i + 1
		}
	}
	return 0
}

// Score sums up the ranks of a set of questions.
type Score struct {
	Questions int     `json:"questions"`
	Recall5   float64 `json:"recall_at_5"`
	Recall10  float64 `json:"recall_at_10"`
	MRR       float64 `json:"mrr"`
}

// score computes recall@5, recall@10 and the mean reciprocal rank (a
// question not found counts 0) of ranks (0: not found).
func score(ranks []int) Score {
	s := Score{Questions: len(ranks)}
	if len(ranks) == 0 {
		return s
	}
	for _, r := range ranks {
		if r <= 0 {
			continue
		}
		if r <= 5 {
			s.Recall5++
		}
		if r <= 10 {
			s.Recall10++
		}
		s.MRR += 1 / float64(r)
	}
	n := float64(len(ranks))
	s.Recall5 /= n
	s.Recall10 /= n
	s.MRR /= n
	return s
}

// within returns the questions with a labelled file under dir ("" or
// ".": every question), their files narrowed to those, so that narrowing
// the index with -dir does not count questions it cannot answer.
func within(qs []Question, dir string) []Question {
	dir = path.Clean(dir)
	if dir == "." || dir == "" {
		return qs
	}
	var out []Question
	for _, q := range qs {
		var files []string
		for _, f := range q.Files {
			if strings.HasPrefix(f, dir+"/") {
				files = append(files, f)
			}
		}
		if len(files) > 0 {
			q.Files = files
			out = append(out, q)
		}
	}
	return out
}

// The splits of the questions.
const (
	splitTune    = "tune"
	splitHeldOut = "heldout"
	splitAll     = "all"
)

// heldOut reports whether a question is in the held-out half: decided by
// a hash of its id alone (FNV-1a, odd), fixed before ranking was tuned,
// so no one chooses which questions are held out.
func heldOut(id string) bool {
	h := fnv.New32a()
	h.Write([]byte(id))
	return h.Sum32()%2 == 1
}

// splitOf returns the questions of a split.
func splitOf(qs []Question, split string) []Question {
	if split == splitAll {
		return qs
	}
	var out []Question
	for _, q := range qs {
		if heldOut(q.ID) == (split == splitHeldOut) {
			out = append(out, q)
		}
	}
	return out
}

// distinct returns the first n distinct documents of docs, in order.
func distinct(docs []string, n int) []string {
	var out []string
	for _, d := range docs {
		if len(out) == n {
			break
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// percentile returns the p-th percentile (0 < p ≤ 1, nearest rank) of
// times in milliseconds; 0 for none.
func percentile(times []time.Duration, p float64) float64 {
	if len(times) == 0 {
		return 0
	}
	s := slices.Clone(times)
	slices.Sort(s)
	i := min(len(s)-1, max(0, int(float64(len(s))*p+0.999999)-1))
	return float64(s[i].Microseconds()) / 1000
}
