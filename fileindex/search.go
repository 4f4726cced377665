package fileindex

import (
	"cmp"
	"path"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/suggest"
)

// Match is a search hit: a file, or a directory (ending in /).
type Match struct {
	Path  string
	Score int
}

// Search returns up to limit entries matching query, best first, and how
// many matched in all. A query matches a path fuzzily (its runes in
// order); a match within the base name counts more, a shorter path a
// little more. An empty query lists the top-level entries first.
func (ix *Index) Search(query string, limit int) ([]Match, int) {
	query = clean(query)
	ix.mu.RLock()
	entries := ix.entries
	ix.mu.RUnlock()
	lq := strings.ToLower(query)
	var hits []Match
	for _, e := range entries {
		if !containsAllBytes(e, lq) {
			continue
		}
		s, ok := score(query, e)
		if !ok {
			continue
		}
		hits = append(hits, Match{Path: e, Score: s})
	}
	slices.SortStableFunc(hits, func(a, b Match) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(len(a.Path), len(b.Path))
	})
	total := len(hits)
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits, total
}

// score rates entry e for query q.
func score(q, e string) (int, bool) {
	if q == "" {
		// Top-level entries first, then by depth.
		return -10 * strings.Count(strings.TrimSuffix(e, "/"), "/"), true
	}
	s, ok := suggest.Fuzzy(q, e)
	if !ok {
		return 0, false
	}
	if !strings.Contains(q, "/") {
		if b, ok := suggest.Fuzzy(q, path.Base(strings.TrimSuffix(e, "/"))); ok {
			s = max(s, b+40)
		}
	}
	return s, true
}

// containsAllBytes is a quick filter before scoring: every byte of lq
// (lower case) occurs in s, ignoring ASCII case.
func containsAllBytes(s, lq string) bool {
	for i := 0; i < len(lq); i++ {
		c := lq[i]
		if strings.IndexByte(s, c) < 0 && (c < 'a' || c > 'z' || strings.IndexByte(s, c-32) < 0) {
			return false
		}
	}
	return true
}
