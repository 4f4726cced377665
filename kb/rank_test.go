package kb

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDemoted_KB4(t *testing.T) {
	for p, want := range map[string]bool{
		"net/http/client.go":                          false,
		"net/http/client_test.go":                     true,
		"net/http/testdata/file":                      true,
		"testdata/x.go":                               true,
		"vendor/golang.org/x/net/http/proxy.go":       true,
		"cmd/vendor/golang.org/x/mod/module/mod.go":   true,
		"syscall/zerrors_linux_amd64.go":              true,
		"syscall/syscall_linux.go":                    false,
		"zoo/zebra.go":                                false, // a z file without the generated tables' underscore
		"api/v1/service.pb.go":                        true,
		"pkg/zz_generated.deepcopy.go":                true,
		"net/http/conn_state_string.go":               false, // two underscores: not stringer's one
		"image/kind_string.go":                        true,
		"tests/test_parser.py":                        true,
		"src/app.test.js":                             true,
		"src/app.spec.ts":                             true,
		"src/contest.go":                              false,
		"docs/testing.md":                             false,
		"third_party/lib/a.c":                         true,
		"web/__tests__/a.js":                          true,
		"internal/fuzz/mutator.go":                    false,
		"cmd/compile/internal/test/testdata/arith.go": true,
	} {
		if got := Demoted(p); got != want {
			t.Errorf("Demoted(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestVariant_KB4(t *testing.T) {
	for p, want := range map[string]bool{
		"crypto/sha256/sha256block_amd64.s":        true,
		"crypto/sha256/sha256block_amd64.go":       true,
		"runtime/sys_linux_arm64.go":               true,
		"runtime/asm.S":                            true,
		"crypto/sha256/sha256.go":                  false,
		"runtime/netpoll_epoll.go":                 false,
		"os/user/lookup_unix.go":                   false,
		"cmd/internal/obj/arm64/asm7.go":           false, // a directory named for an architecture: portable code about it
		"cmd/link/internal/amd64.go":               false, // the architecture alone names the file
		"docs/amd64_notes.md":                      false,
		"os/file_plan9.go":                         true, // an operating system's variant
		"crypto/aes/gcm_ppc64x.go":                 true, // a family of architectures
		"crypto/x509/root_darwin.go":               true,
		"syscall/syscall_linux_test.go":            true,
		"os/linux.go":                              false, // the system alone names the file
		"net/js_parse.go":                          false, // Go reads only the last parts
		"cmd/compile/internal/ssa/rewriteAMD64.go": true,  // the compiler's spelling
		"cmd/compile/internal/ssa/rewrite386.go":   true,
		"cmd/compile/internal/ssa/rewriteWasm.go":  true,
		"cmd/compile/internal/ssa/rewrite.go":      false,
		"time/alarm.go":                            false, // arm, but not a capital's
		"cmd/asm/ARM64.go":                         false, // the architecture alone names the file
	} {
		if got := Variant(p); got != want {
			t.Errorf("Variant(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestAnalyseQuery_KB4(t *testing.T) {
	for _, tc := range []struct {
		q          string
		terms      []string
		wantsTests bool
	}{
		// Stopwords for code go; plurals get their singular; adjacent
		// words also make one term, as code spells them.
		{"how do retries back off", []string{"retries", "back", "off", "retry", "retriesback", "backoff"}, false},
		{"Where is the function that reads files?", []string{"reads", "files", "read", "file", "readsfiles"}, false},
		{"how does the implementation work", []string{"implementation", "work"}, false}, // only stopwords: kept
		{"run the benchmark tests", []string{"run", "benchmark", "tests", "test", "benchmarktests"}, true},
		{"sync.Once", []string{"sync", "once", "synconce"}, false},
		// Letters and digits join too; a past or gerund also stands for
		// its stem.
		{"SHA-256 digest", []string{"sha", "256", "digest", "sha256", "256digest"}, false},
		{"printed wrapped", []string{"printed", "wrapped", "print", "printe", "wrapp", "wrappe", "wrap", "printedwrapped"}, false},
		{"matches indexes classes status", []string{"matches", "indexes", "classes", "status", "match", "index", "class", "matchesindexes", "indexesclasses", "classesstatus"}, false},
	} {
		got := analyseQuery(tc.q)
		if diff := cmp.Diff(tc.terms, got.terms); diff != "" {
			t.Errorf("analyseQuery(%q) terms (-want +got):\n%s", tc.q, diff)
		}
		if got.wantsTests != tc.wantsTests {
			t.Errorf("analyseQuery(%q) wantsTests = %v", tc.q, got.wantsTests)
		}
	}
}

func TestSingular(t *testing.T) {
	for in, want := range map[string]string{
		"retries": "retry", "files": "file", "matches": "match", "boxes": "box", "classes": "class",
		"status": "", "analysis": "", "class": "", "bus": "", "is": "", "goes": "goe",
	} {
		if got := singular(in); got != want {
			t.Errorf("singular(%q) = %q, want %q", in, got, want)
		}
	}
}

// rankDocuments: a document's best chunk counts most, its further ones a
// little (Spread); a demoted document falls behind unless the query asks
// for tests; at most PerDoc chunks a document, those at least half as
// good as its best.
func TestRankDocuments_KB4(t *testing.T) {
	hit := func(doc string, start int, score float64) Hit {
		return Hit{Chunk: Chunk{Doc: doc, Start: start, End: start + 9}, Score: score}
	}
	hits := []Hit{
		hit("a_test.go", 1, 11), hit("vendor/v.go", 1, 12),
		hit("b.go", 1, 6), hit("b.go", 11, 5), hit("b.go", 21, 4), hit("b.go", 31, 1),
		hit("c.go", 1, 6.5),
		hit("d.go", 1, 6.4), hit("d.go", 11, 0.5),
	}
	where := func(hs []Hit) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.Doc+":"+string(rune('0'+h.Start/10)))
		}
		return out
	}
	r := Ranking{}.withDefaults()
	got := where(rankDocuments(slices.Clone(hits), query{}, r))
	// b: 6 + 0.1·5 + 0.01·4 = 6.54 beats c's 6.5 and d's 6.45 (whose
	// second chunk, below half its best, is not returned); vendor/v.go:
	// 12 × 0.35 = 4.2; a_test: 11 × 0.35 = 3.85.
	want := []string{"b.go:0", "b.go:1", "c.go:0", "d.go:0", "vendor/v.go:0", "a_test.go:0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ranking (-want +got):\n%s", diff)
	}
	// Asking for tests, a test is demoted by √0.35 only: 11 × 0.59 = 6.51;
	// vendored code stays demoted.
	got = where(rankDocuments(slices.Clone(hits), query{wantsTests: true}, r))
	want = []string{"b.go:0", "b.go:1", "a_test.go:0", "c.go:0", "d.go:0", "vendor/v.go:0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a query asking for tests (-want +got):\n%s", diff)
	}
	r.Spread = -1
	got = where(rankDocuments(slices.Clone(hits), query{}, r.withDefaults()))
	if got[0] != "c.go:0" {
		t.Errorf("spread off: %v, want c.go (6.5) first", got)
	}
}

func TestStems_KB4(t *testing.T) {
	for in, want := range map[string][]string{
		"printed":  {"print", "printe"},
		"encoded":  {"encod", "encode"},
		"wrapped":  {"wrapp", "wrappe", "wrap"},
		"copied":   {"copi", "copie", "copy"},
		"parsing":  {"pars", "parse"},
		"running":  {"runn", "runne", "run"},
		"used":     nil, // the stem would be too short
		"red":      nil,
		"thing":    nil,
		"printer":  nil,
		"embedded": {"embedd", "embedde", "embed"},
	} {
		if got := stems(in); !slices.Equal(got, want) {
			t.Errorf("stems(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestQualifiers_KB4(t *testing.T) {
	for q, want := range map[string][]string{
		"How does sync.Once work?":               {"sync"},
		"http.Client.Do and context.WithTimeout": {"http", "context"},
		"t.Parallel":                             {"t"},
		"see redis.io or go.dev":                 nil, // host names: no capital after the dot
		"A sentence. Then another":               nil, // "sentence" is not lowercase-then-dot-then-capital? it is: but a space follows
		"x.Y.Z, utf8.DecodeRune":                 {"x", "utf8"},
		"Foo.Bar":                                nil, // a capital before the dot: a type, not a package
		"crypto/tls.Config":                      {"tls"},
		"trailing dot.":                          nil,
		".Leading":                               nil,
	} {
		if got := qualifiers(q); !slices.Equal(got, want) {
			t.Errorf("qualifiers(%q) = %q, want %q", q, got, want)
		}
	}
}

// A document whose path holds the query's words, and one in the
// directory of a qualified name's package, rank above one of equal
// evidence elsewhere (SPEC KB-4).
func TestRankDocumentsPath_KB4(t *testing.T) {
	hit := func(doc string, score float64) Hit {
		return Hit{Chunk: Chunk{Doc: doc, Start: 1, End: 9}, Score: score}
	}
	r := Ranking{}.withDefaults()
	q := analyseQuery("how does sync.Once run a function")
	got := rankDocuments([]Hit{hit("runtime/proc.go", 10), hit("internal/once.go", 9), hit("sync/once.go", 8)}, q, r)
	var docs []string
	for _, h := range got {
		docs = append(docs, h.Doc)
	}
	// The words: sync, once, run. sync/once.go: 8 × (1 + 0.5·2/3) × 1.5
	// = 16; internal/once.go: 9 × (1 + 0.5·1/3) = 10.5; runtime/proc.go:
	// 10 (runtime is not run).
	if want := []string{"sync/once.go", "internal/once.go", "runtime/proc.go"}; !slices.Equal(docs, want) {
		t.Errorf("ranked %v, want %v", docs, want)
	}
	r.PathBoost, r.PackageBoost = -1, -1
	got = rankDocuments([]Hit{hit("runtime/proc.go", 10), hit("internal/once.go", 9), hit("sync/once.go", 8)}, q, r.withDefaults())
	if got[0].Doc != "runtime/proc.go" {
		t.Errorf("boosts off: %s first, want runtime/proc.go (the best evidence)", got[0].Doc)
	}
}

// A document whose chunks hold more of the query's words (by a variant
// too: "retries" → retry) ranks above one of equal evidence holding fewer
// (SPEC KB-4, Ranking.Coverage).
func TestRankDocumentsCoverage_KB4(t *testing.T) {
	hit := func(doc, text string, score float64) Hit {
		return Hit{Chunk: Chunk{Doc: doc, Start: 1, End: 9, Text: text}, Score: score}
	}
	q := analyseQuery("how do retries back off")
	hits := []Hit{
		hit("a.go", "retry retry retry\nretry", 10),
		hit("b.go", "// retry with a back\n// off", 9),
	}
	r := Ranking{}.withDefaults()
	got := rankDocuments(slices.Clone(hits), q, r)
	// The words: retries, back, off. a.go: 10 × (1 + 0.5·1/3) = 11.67;
	// b.go: 9 × (1 + 0.5·3/3) = 13.5.
	if got[0].Doc != "b.go" {
		t.Errorf("ranked %s first, want b.go (all the words)", got[0].Doc)
	}
	r.Coverage, r.Proximity = -1, -1
	if got = rankDocuments(slices.Clone(hits), q, r.withDefaults()); got[0].Doc != "a.go" {
		t.Errorf("coverage off: ranked %s first, want a.go (the better score)", got[0].Doc)
	}
}

// A document whose chunks hold the query's adjacent words side by side
// (in prose, or as the parts of an identifier) ranks above one of equal
// evidence holding them apart (SPEC KB-4, Ranking.Proximity).
func TestRankDocumentsProximity_KB4(t *testing.T) {
	hit := func(doc, text string, score float64) Hit {
		return Hit{Chunk: Chunk{Doc: doc, Start: 1, End: 9, Text: text}, Score: score}
	}
	q := analyseQuery("what does the write barrier do while marking")
	if want := [][2]int{{0, 1}, {2, 3}}; !slices.Equal(q.pairs, want) {
		t.Fatalf("pairs %v of words %v, want %v (write barrier, while marking)", q.pairs, q.words, want)
	}
	for _, tc := range []struct{ near, far string }{
		{"// the write barrier shades while marking", "// write the value\n// barrier while\n// marking"},
		{"if writeBarrier.enabled { markWhileMarking() }", "write(x)\nbarrier()\nwhile()\nmarking()"},
		{"// the barrier is a write of a pointer while marking", "// write the value\n// barrier while\n// marking"},
	} {
		hits := []Hit{hit("far.go", tc.far, 10), hit("near.go", tc.near, 9.5)}
		r := Ranking{}.withDefaults()
		if got := rankDocuments(slices.Clone(hits), q, r); got[0].Doc != "near.go" {
			t.Errorf("%q against %q: ranked %s first, want near.go", tc.near, tc.far, got[0].Doc)
		}
		r.Proximity = -1
		if got := rankDocuments(slices.Clone(hits), q, r.withDefaults()); got[0].Doc != "far.go" {
			t.Errorf("proximity off: ranked %s first, want far.go (the better score)", got[0].Doc)
		}
	}
}

// A hostile or pasted query of thousands of words counts its first
// MaxQueryWords distinct words and as many adjacent pairs: every term is
// a pass over postings (KB-4; 22 s of CPU for a 24 KB query on the GOROOT
// index in SQLite before the cap). A query within the cap is analysed
// whole.
func TestLongQueryBounded_KB4(t *testing.T) {
	var words []string // distinct words of letters only: zqaa, zqab, …
	for i := range 5000 {
		words = append(words, "zq"+string(rune('a'+i/676%26))+string(rune('a'+i/26%26))+string(rune('a'+i%26)))
	}
	q := analyseQuery(strings.Join(words, " "))
	if len(q.words) != MaxQueryWords || q.words[0] != words[0] || q.words[MaxQueryWords-1] != words[MaxQueryWords-1] {
		t.Errorf("words: %d, first %q, last %q; want the first %d", len(q.words), q.words[0], q.words[len(q.words)-1], MaxQueryWords)
	}
	if len(q.terms) > 4*MaxQueryWords {
		t.Errorf("%d terms for a 5,000-word query; want at most %d", len(q.terms), 4*MaxQueryWords)
	}
	short := analyseQuery(strings.Join(words[:MaxQueryWords], " "))
	if !slices.Contains(short.terms, words[MaxQueryWords-1]) || !slices.Contains(short.terms, words[MaxQueryWords-2]+words[MaxQueryWords-1]) {
		t.Errorf("a query within the cap lost terms: %v", short.terms)
	}
}

// A hostile question in Chinese holding every glossary term, over and
// over, is bounded as any long query: the glossary's words join the
// query's terms before the cap (KB-4).
func TestLongChineseQueryBounded_KB4(t *testing.T) {
	var b strings.Builder
	for b.Len() < 100_000 {
		for term := range glossary {
			b.WriteString(term)
		}
	}
	q := analyseQuery(b.String())
	if len(q.words) > MaxQueryWords {
		t.Errorf("%d words for a 100 KB question in Chinese; want at most %d", len(q.words), MaxQueryWords)
	}
	if len(q.terms) > 4*MaxQueryWords {
		t.Errorf("%d terms for a 100 KB question in Chinese; want at most %d", len(q.terms), 4*MaxQueryWords)
	}
}
