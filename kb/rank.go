package kb

import (
	"math"
	"math/bits"
	"path"
	"slices"
	"sort"
	"strings"
)

// Ranking tunes how the keyword pass ranks documents; the zero value is
// the defaults (which bench/kbeval measured; see bench/README.md).
type Ranking struct {
	// Candidates is how many chunks the backend's keyword pass returns to
	// be ranked into documents: 0 means 50 (never fewer than a search's
	// own Candidates).
	Candidates int
	// Spread weighs a document's further chunks: its score is its best
	// chunk's plus Spread times its second's plus Spread² times its
	// third's. 0 means 0.1; negative counts the best chunk alone.
	Spread float64
	// Demote multiplies the score of tests, test data, vendored and
	// generated files (see Demoted); tests and test data get its square
	// root instead when the query asks for tests (the question may be
	// about the code that runs them: testing, httptest): 0 means 0.35; 1
	// or more does not demote.
	Demote float64
	// Variant multiplies the score of a platform's variant of code (see
	// Variant): 0 means 0.6; 1 or more does not demote.
	Variant float64
	// PerDoc is how many chunks of one document a search returns at
	// most, the best first: 0 means 2.
	PerDoc int
	// PathBoost multiplies a document's score by 1 + PathBoost times
	// the share of the query's words (variants aside) its path holds
	// ("sync.Once" and sync/once.go): 0 means 0.5; negative does not
	// boost.
	PathBoost float64
	// Coverage multiplies a document's score by 1 + Coverage times the
	// share of the query's words (by themselves or a variant) that its
	// chunks among the keyword pass's candidates hold, heading and text:
	// a file that speaks of every part of the question beats one that
	// speaks often of a part. 0 means 0.5; negative does not boost.
	Coverage float64
	// PackageBoost multiplies by 1 + PackageBoost the score of a
	// document in a directory named as a qualifier of a qualified name
	// of the query ("sync.Once": sync/…): 0 means 0.5; negative does
	// not boost.
	PackageBoost float64
	// Proximity multiplies a document's score by 1 + Proximity times
	// the share of the query's adjacent word pairs ("write barrier",
	// "private key") that its candidate chunks hold side by side, in a
	// line of prose or as the parts of an identifier (writeBarrier):
	// words next to each other say more than the same words apart. 0
	// means 0.25; negative does not boost.
	Proximity float64
}

// qualifiers returns the lowercase qualifiers of the qualified names in
// q, as Go writes them ("sync.Once", "http.Client.Do" → sync, http):
// a lowercase word of letters and digits, a dot, then a capital (not a
// host name: "redis.io").
func qualifiers(q string) []string {
	var out []string
	for i := 1; i+1 < len(q); i++ {
		if q[i] != '.' || q[i+1] < 'A' || q[i+1] > 'Z' {
			continue
		}
		j := i
		for j > 0 && ('a' <= q[j-1] && q[j-1] <= 'z' || '0' <= q[j-1] && q[j-1] <= '9') {
			j--
		}
		if j < i && (j == 0 || !isASCIIWord(q[j-1]) && q[j-1] != '.') && 'a' <= q[j] && q[j] <= 'z' {
			out = append(out, q[j:i])
		}
	}
	return dedupe(out)
}

// pathCoverage is the share of q's words (a plural also by its
// singular) that the path of doc holds.
func pathCoverage(doc string, q query) float64 {
	pt := PathTerms(doc)
	n := 0
	for _, w := range q.words {
		s := singular(w)
		for _, t := range pt {
			if t == w || t == s && s != "" {
				n++
				break
			}
		}
	}
	return float64(n) / float64(len(q.words))
}

func (r Ranking) withDefaults() Ranking {
	switch {
	case r.Proximity == 0:
		r.Proximity = 0.25
	case r.Proximity < 0:
		r.Proximity = 0
	}
	switch {
	case r.Coverage == 0:
		r.Coverage = 0.5
	case r.Coverage < 0:
		r.Coverage = 0
	}
	if r.PathBoost == 0 {
		r.PathBoost = 0.5
	}
	if r.PackageBoost == 0 {
		r.PackageBoost = 0.5
	}
	if r.PackageBoost < 0 {
		r.PackageBoost = 0
	}
	if r.PathBoost < 0 {
		r.PathBoost = 0
	}
	if r.Candidates <= 0 {
		r.Candidates = 50
	}
	r.Candidates = min(r.Candidates, MaxCandidates)
	switch {
	case r.Spread == 0:
		r.Spread = 0.1
	case r.Spread < 0:
		r.Spread = 0
	}
	if r.Demote <= 0 {
		r.Demote = 0.35
	}
	r.Demote = min(r.Demote, 1)
	if r.Variant <= 0 {
		r.Variant = 0.6
	}
	r.Variant = min(r.Variant, 1)
	if r.PerDoc <= 0 {
		r.PerDoc = 2
	}
	return r
}

// queryStopwords are dropped from queries (not from documents): the words
// of a question about code that say nothing of which code ("how is X
// implemented", "the function that does Y"). A query of only these keeps
// them.
var queryStopwords = map[string]bool{
	"function": true, "functions": true, "func": true, "method": true, "methods": true,
	"implement": true, "implemented": true, "implementation": true, "implements": true,
	"code": true, "go": true, "golang": true, "does": true, "do": true, "done": true,
	"happen": true, "happens": true, "work": true, "works": true, "way": true,
	"should": true, "would": true, "could": true, "we": true, "my": true, "me": true,
	"our": true, "some": true, "someone": true, "something": true, "one": true,
	"use": true, "used": true, "using": true, "find": true,
	"sure": true, "decide": true, "decides": true, "also": true,
	"about": true, "like": true, "such": true, "than": true, "them": true, "they": true,
	"their": true, "when": true, "where": true, "there": true, "here": true,
	"after": true, "before": true, "between": true, "being": true, "been": true,
	"own": true, "other": true, "instead": true, "without": true, "each": true,
	"every": true, "all": true, "any": true, "which": true, "whose": true, "if": true,
	"e": true, "g": true, "eg": true, "ie": true, "etc": true, "so": true, "but": true,
}

// testWords in a query ask for tests: tests and test data are not
// demoted.
var testWords = map[string]bool{
	"test": true, "tests": true, "testing": true, "testdata": true, "benchmark": true,
	"benchmarks": true, "fuzz": true, "fuzzing": true, "example": true, "examples": true,
}

// query is a search's query analysed for the keyword pass.
type query struct {
	terms      []string       // distinct, with variants
	words      []string       // the query's own words, without variants
	wordOf     map[string]int // a term → the index of the word (the first 64) it is or is a variant of
	pairs      [][2]int       // adjacent words of the query (indexes into words), at most 64
	packages   []string       // the packages of qualified names ("sync.Once" → sync)
	wantsTests bool
}

// MaxQueryWords is how many distinct words of a query, and how many of
// its adjacent pairs, count; the rest of a longer query is ignored. Each
// term is a pass over its postings: a query of thousands of words (a
// pasted file, or a hostile model's kb_search) held a core for 22 s on
// the GOROOT index in SQLite.
const MaxQueryWords = 64

// analyseQuery makes the keyword pass's terms of a query: its Terms and
// those of the English words of the programming terms its Chinese text
// holds (glossary), without query stopwords (unless nothing else is
// left), each plural also as its singular ("retries" → retry), and each
// pair of adjacent words also as one ("back off" → backoff, "read file"
// → readfile, as code spells them).
func analyseQuery(q string) query {
	all := Terms(q)
	if g := glossaryWords(q); g != "" {
		all = append(all, Terms(g)...)
	}
	var out query
	kept := make([]string, 0, len(all))
	for _, t := range all {
		if testWords[t] {
			out.wantsTests = true
		}
		if !queryStopwords[t] {
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		kept = all
	}
	kept = dedupe(kept)
	if len(kept) > MaxQueryWords {
		kept = kept[:MaxQueryWords]
	}
	out.words = slices.Clone(kept)
	out.packages = qualifiers(q)
	out.wordOf = map[string]int{}
	for i, w := range out.words[:min(len(out.words), 64)] {
		for _, v := range append([]string{w, singular(w)}, stems(w)...) {
			if _, ok := out.wordOf[v]; !ok && v != "" {
				out.wordOf[v] = i
			}
		}
	}
	for _, t := range kept {
		if s := singular(t); s != "" {
			kept = append(kept, s)
		}
		kept = append(kept, stems(t)...)
	}
	words := queryWords(q)
	for i, pairs := 1, 0; i < len(words) && pairs < MaxQueryWords; i++ {
		a, b := words[i-1], words[i]
		if queryStopwords[a] || queryStopwords[b] || stopwords[a] || stopwords[b] {
			continue
		}
		if j := a + b; len(j) <= MaxTermLen {
			kept = append(kept, j)
			pairs++
		}
		ia, okA := out.wordOf[a]
		ib, okB := out.wordOf[b]
		if okA && okB && ia != ib && len(out.pairs) < 64 && !slices.Contains(out.pairs, [2]int{ia, ib}) {
			out.pairs = append(out.pairs, [2]int{ia, ib})
		}
	}
	out.terms = dedupe(kept)
	return out
}

// proximityWindow is how far apart, in terms, two words of a query pair
// may be and still count as side by side (2: one term between them).
const proximityWindow = 2

// wordsIn returns the set (bit i: q.words[i]) of the query's words that
// text holds, as a term of its own or a variant's, and the set (bit i:
// q.pairs[i]) of the query's pairs it holds side by side in a line
// (proximityWindow). fold is scratch.
func (q query) wordsIn(text string, fold *[]byte) (held, pairs uint64) {
	for line := range strings.SplitSeq(text, "\n") {
		var may bool
		if *fold, may = mayHold(*fold, line, q.terms); !may {
			continue
		}
		var recent [proximityWindow]int // word indexes of the last terms, newest first; -1: none
		for i := range recent {
			recent[i] = -1
		}
		for _, t := range Terms(line) {
			w, ok := q.wordOf[t]
			if !ok {
				w = -1
			} else {
				held |= 1 << w
				if len(q.pairs) > 0 {
					for _, r := range recent {
						if r < 0 || r == w {
							continue
						}
						for k, p := range q.pairs {
							if p == [2]int{r, w} || p == [2]int{w, r} {
								pairs |= 1 << k
							}
						}
					}
				}
			}
			copy(recent[1:], recent[:])
			recent[0] = w
		}
	}
	return held, pairs
}

// queryWords are the lowercased runs of ASCII letters and digits of q
// of two characters or more, in order ("SHA-256" → sha 256, which join
// as sha256, as code spells it).
func queryWords(q string) []string {
	f := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return (r < 'a' || r > 'z') && (r < '0' || r > '9') })
	out := f[:0]
	for _, w := range f {
		if len(w) >= 2 {
			out = append(out, w)
		}
	}
	return out
}

// stems returns what a verb's past or gerund may stand for in code
// ("printed" → print, "encoded" → encode, "wrapped" → wrap, "parsing" →
// parse, pars), none when t ends otherwise or its stem would be shorter
// than 4 letters: variants that no chunk holds match nothing.
func stems(t string) []string {
	var stem string
	switch n := len(t); {
	case n >= 6 && strings.HasSuffix(t, "ed"):
		stem = t[:n-2]
	case n >= 7 && strings.HasSuffix(t, "ing"):
		stem = t[:n-3]
	default:
		return nil
	}
	out := []string{stem, stem + "e"}
	if n := len(stem); stem[n-1] == stem[n-2] && 'a' <= stem[n-1] && stem[n-1] <= 'z' && !strings.ContainsRune("aeiou", rune(stem[n-1])) {
		out = append(out, stem[:n-1]) // wrapped → wrap
	}
	if stem[len(stem)-1] == 'i' {
		out = append(out, stem[:len(stem)-1]+"y") // copied → copy
	}
	return out
}

// singular returns an English plural's singular ("retries" → retry,
// "matches" → match, "files" → file), "" when t does not look plural.
func singular(t string) string {
	n := len(t)
	switch {
	case n < 4 || t[n-1] != 's' || t[n-2] == 's' || t[n-2] == 'u' || t[n-2] == 'i':
		return ""
	case strings.HasSuffix(t, "ies") && n > 4:
		return t[:n-3] + "y"
	case strings.HasSuffix(t, "ches"), strings.HasSuffix(t, "shes"), strings.HasSuffix(t, "xes"), strings.HasSuffix(t, "sses"):
		return t[:n-2]
	}
	return t[:n-1]
}

// Demoted reports a document the keyword pass ranks below the others of
// equal evidence: tests (Go's _test.go, test_*.py, *.test.js and the
// like) and test data (under testdata/, fixtures/, __snapshots__/), less
// so when the query asks for tests, and vendored code (under vendor/ or
// third_party/) and generated code (*.pb.go, zz_generated*, Go's
// z*_GOOS.go tables) always.
func Demoted(p string) bool { return demotion(p) != kept }

// What demotion a document gets.
const (
	kept      = iota // none
	testFile         // a test or test data: demoted unless the query asks for tests
	otherFile        // vendored or generated: demoted always
)

// demotion classifies a document (see Demoted).
func demotion(p string) int {
	dir, base := path.Split(p)
	lower := strings.ToLower(base)
	testDir := false
	for seg := range strings.SplitSeq(strings.TrimSuffix(dir, "/"), "/") {
		switch seg {
		case "vendor", "third_party":
			return otherFile
		case "testdata", "fixtures", "__snapshots__", "__tests__":
			testDir = true
		}
	}
	stem := strings.TrimSuffix(lower, path.Ext(lower))
	switch {
	case strings.HasSuffix(lower, ".pb.go"), strings.HasPrefix(lower, "zz_generated"),
		strings.HasSuffix(lower, "_string.go") && strings.Count(stem, "_") == 1:
		return otherFile
	case strings.HasSuffix(lower, ".go") && len(stem) > 1 && stem[0] == 'z' && strings.Contains(stem, "_"):
		return otherFile // Go's generated tables: zerrors_linux_amd64.go, zsyscall_windows.go
	case strings.HasSuffix(stem, "_test"), strings.HasPrefix(stem, "test_"),
		strings.HasSuffix(stem, ".test"), strings.HasSuffix(stem, ".spec"):
		return testFile
	}
	if testDir {
		return testFile
	}
	return kept
}

// archs are the processor architectures Go names files after, with the
// families its code names files after by convention (ppc64x: ppc64 and
// ppc64le).
var archs = map[string]bool{
	"386": true, "amd64": true, "arm": true, "arm64": true, "loong64": true, "mips": true,
	"mipsle": true, "mips64": true, "mips64le": true, "ppc64": true, "ppc64le": true,
	"riscv64": true, "s390x": true, "wasm": true, "sparc64": true,
	"ppc64x": true, "mipsx": true, "mips64x": true,
}

// goos are the operating systems Go names files after (name_GOOS.go,
// name_GOOS_GOARCH.go).
var goos = map[string]bool{
	"aix": true, "android": true, "darwin": true, "dragonfly": true, "freebsd": true,
	"hurd": true, "illumos": true, "ios": true, "js": true, "linux": true, "netbsd": true,
	"openbsd": true, "plan9": true, "solaris": true, "wasip1": true, "windows": true, "zos": true,
}

// Variant reports a platform's variant of code, which the keyword pass
// ranks a little below the portable code it specialises: assembly (.s)
// and Go files for one processor architecture (sha256block_amd64.go,
// zsys_linux_arm64.go, the compiler's rewriteAMD64.go) or one operating
// system (file_plan9.go, root_darwin.go, as Go's build constraints name
// them).
func Variant(p string) bool {
	v, _ := platform(p)
	return v
}

// platform reports whether p is a platform's variant of code (see
// Variant) and the operating system it is for ("" when it names none),
// so that a query naming the system ("on Linux") does not demote it.
func platform(p string) (variant bool, os string) {
	base := path.Base(p)
	if strings.HasSuffix(base, ".s") || strings.HasSuffix(base, ".S") {
		return true, ""
	}
	stem, ok := strings.CutSuffix(base, ".go")
	if !ok {
		return false, ""
	}
	stem = strings.TrimSuffix(stem, "_test")
	parts := strings.Split(stem, "_")
	if n := len(parts); n >= 2 {
		switch last := parts[n-1]; {
		case goos[last]:
			return true, last
		case archs[last] && n >= 3 && goos[parts[n-2]]:
			return true, parts[n-2]
		}
	}
	for _, part := range parts {
		if archs[part] && part != stem {
			return true, ""
		}
	}
	if camelArch(stem) {
		return true, ""
	}
	return false, ""
}

// camelArch reports a Go file name ending in an architecture's name as
// Go's compiler spells it after a lowercase word: rewriteAMD64,
// rewriteWasm (not alarm: the name must start with a capital).
func camelArch(stem string) bool {
	for _, name := range camelArchs {
		n := len(stem) - len(name)
		if n > 0 && strings.HasSuffix(stem, name) && 'a' <= stem[n-1] && stem[n-1] <= 'z' {
			return true
		}
	}
	return false
}

// camelArchs are the names camelArch looks for: each of archs in upper
// case (AMD64) and capitalised (Wasm), spelled once rather than for every
// document a search ranks.
var camelArchs = func() []string {
	var out []string
	for a := range archs {
		out = append(out, strings.ToUpper(a), strings.ToUpper(a[:1])+a[1:])
	}
	return out
}()

// docRank is a document's evidence in the keyword pass.
type docRank struct {
	doc    string
	score  float64
	chunks []Hit  // best first
	held   uint64 // the query's words its candidate chunks hold (query.wordsIn)
	pairs  uint64 // the query's pairs they hold side by side
}

// rankDocuments ranks the keyword pass's chunk hits by document: a
// document scores its best chunk's score plus Spread times its second's
// plus Spread² times its third's (evidence spread over a file counts,
// but one good chunk beats many weak ones), times Demote for a demoted
// document unless the query asks for tests. It returns the best chunks
// of the best documents, at most PerDoc a document, document by
// document; a document's further chunks only when they score at least
// half its best.
func rankDocuments(hits []Hit, q query, r Ranking) []Hit {
	byDoc := map[string]*docRank{}
	var docs []*docRank
	var fold []byte
	coverage := r.Coverage > 0 && len(q.words) > 0
	proximity := r.Proximity > 0 && len(q.pairs) > 0
	for _, h := range hits {
		d := byDoc[h.Doc]
		if d == nil {
			d = &docRank{doc: h.Doc}
			byDoc[h.Doc] = d
			docs = append(docs, d)
		}
		d.chunks = append(d.chunks, h)
		if coverage || proximity {
			w1, p1 := q.wordsIn(h.Heading, &fold)
			w2, p2 := q.wordsIn(h.Text, &fold)
			d.held |= w1 | w2
			d.pairs |= p1 | p2
		}
	}
	for _, d := range docs {
		sort.SliceStable(d.chunks, func(i, j int) bool { return hitLess(d.chunks[i], d.chunks[j]) })
		w := 1.0
		for i, c := range d.chunks {
			if i == 3 {
				break
			}
			d.score += w * c.Score
			w *= r.Spread
		}
		if coverage {
			d.score *= 1 + r.Coverage*float64(bits.OnesCount64(d.held))/float64(min(len(q.words), 64))
		}
		if proximity {
			d.score *= 1 + r.Proximity*float64(bits.OnesCount64(d.pairs))/float64(len(q.pairs))
		}
		if r.PathBoost > 0 && len(q.words) > 0 {
			d.score *= 1 + r.PathBoost*pathCoverage(d.doc, q)
		}
		if r.PackageBoost > 0 && len(q.packages) > 0 && slices.Contains(q.packages, path.Base(path.Dir(d.doc))) {
			d.score *= 1 + r.PackageBoost
		}
		switch k := demotion(d.doc); {
		case k == otherFile || k == testFile && !q.wantsTests:
			d.score *= r.Demote
		case k == testFile:
			d.score *= math.Sqrt(r.Demote)
		}
		if v, os := platform(d.doc); v && (os == "" || !slices.Contains(q.words, os)) {
			d.score *= r.Variant
		}
	}
	sort.SliceStable(docs, func(i, j int) bool {
		if docs[i].score != docs[j].score {
			return docs[i].score > docs[j].score
		}
		return docs[i].doc < docs[j].doc
	})
	out := make([]Hit, 0, len(docs))
	for _, d := range docs {
		best := d.chunks[0].Score
		for i, c := range d.chunks {
			if i == r.PerDoc || i > 0 && c.Score < best/2 {
				break
			}
			out = append(out, c)
		}
	}
	return out
}
