package kb

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestTerms(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"ReadFile", []string{"readfile", "read", "file"}},
		{"HTTPServer", []string{"httpserver", "http", "server"}},
		{"read_file READ_FILE readFile", []string{"readfile", "read", "file", "readfile", "read", "file", "readfile", "read", "file"}},
		{"parseURLQuery2String", []string{"parseurlquery2string", "parse", "url", "query", "string"}},
		{"utf8 sha256sum v2", []string{"utf8", "utf", "sha256sum", "sha", "256", "sum", "v2"}},
		{"__init__ x_y_z", []string{"init", "xyz"}},
		{"the quick brown fox is on a log", []string{"quick", "brown", "fox", "log"}},
		{"a b c 1 2 3 x", nil},
		{"net/http.Client{Timeout: 5*time.Second}", []string{"net", "http", "client", "timeout", "time", "second"}},
		{"Größenänderung ÜBERSICHT", []string{"größenänderung", "übersicht"}},
		{"e\u0301cole", []string{"e\u0301cole"}}, // a combining mark stays in its word
		{"日本語のテキスト", []string{"日本", "本語", "語の", "のテ", "テキ", "キス", "スト"}},
		{"中 文", []string{"中", "文"}},
		{"한국어 검색", []string{"한국", "국어", "검색"}},
		{"go语言", []string{"go", "语言"}},
		{"x" + strings.Repeat("y", 100), []string{"x" + strings.Repeat("y", MaxTermLen-1)}},
		{strings.Repeat("é", 40), []string{strings.Repeat("é", MaxTermLen/2)}},
		{"bad \xff bytes", []string{"bad", "bytes"}},
	} {
		if diff := cmp.Diff(tc.want, Terms(tc.in)); diff != "" {
			t.Errorf("Terms(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestChunkTerms(t *testing.T) {
	got := ChunkTerms(Chunk{Heading: "Install", Text: "run setup"})
	if diff := cmp.Diff([]string{"install", "run", "setup"}, got); diff != "" {
		t.Errorf("ChunkTerms (-want +got):\n%s", diff)
	}
}

// checkTerms checks what every term must be: short, valid, lowercase,
// letters, digits and marks only, findable by itself.
func checkTerms(t *testing.T, in string, terms []string) {
	t.Helper()
	for _, term := range terms {
		if term == "" || len(term) > MaxTermLen || !utf8.ValidString(term) {
			t.Fatalf("Terms(%q): bad term %q", in, term)
		}
		n := 0
		for _, r := range term {
			n++
			if !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)) || r < utf8.RuneSelf && unicode.IsUpper(r) {
				t.Fatalf("Terms(%q): term %q holds %q", in, term, r)
			}
		}
		if n < 2 && !isCJK([]rune(term)[0]) || stopwords[term] {
			t.Fatalf("Terms(%q): term %q is too short or a stopword", in, term)
		}
		again := Terms(term)
		found := false
		for _, a := range again {
			found = found || a == term
		}
		if !found {
			t.Fatalf("Terms(%q): term %q does not find itself: Terms(%q) = %q", in, term, term, again)
		}
	}
}

func FuzzTerms(f *testing.F) {
	for _, s := range []string{"ReadFile", "HTTPServer_v2", "日本語のテキスト", "e\u0301cole", "\xff\xfe", "ǅungla İstanbul", "x__y", "123abc456"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		checkTerms(t, in, Terms(in))
	})
}

// BenchmarkTerms analyses Go source (GOROOT/src/net/http): MB/s.
func BenchmarkTerms(b *testing.B) {
	var text []byte
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("go env GOROOT: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(goroot)), "src", "net", "http")
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".go") {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err == nil {
				text = append(text, data...)
			}
		}
	}
	if len(text) == 0 {
		b.Skip("no Go source to analyse")
	}
	s := string(text)
	b.SetBytes(int64(len(s)))
	b.ResetTimer()
	for range b.N {
		Terms(s)
	}
}
