package kb

import (
	"slices"
	"testing"
	"unicode/utf8"
)

// A question in Chinese over English code is matched on the English words
// of the programming terms it holds, the longest term first (SPEC KB-4).
func TestGlossaryWords_KB4(t *testing.T) {
	for q, want := range map[string]string{
		"怎样对一个切片进行排序?":          "slice sort",              // 进行 (carry out) is no term, nor its 行 (line)
		"如何使用读写锁?":              "rwmutex read write lock", // the longest term, not 读 and 写
		"如何把 JSON 解码到结构体?":      "decode struct",
		"HTTP 請求的錯誤":            "request error err", // traditional
		"how do I sort a slice": "",
		"":                      "",
	} {
		if got := glossaryWords(q); got != want {
			t.Errorf("glossaryWords(%q) = %q, want %q", q, got, want)
		}
	}
	q := analyseQuery("如何读取 HTTP 请求中的表单字段?")
	for _, w := range []string{"read", "http", "request", "form", "field"} {
		if !slices.Contains(q.terms, w) {
			t.Errorf("analyseQuery: terms %v lack %q", q.terms, w)
		}
	}
}

// Every glossary term is two CJK characters or more, and its English
// words are searchable terms.
func TestGlossaryTerms(t *testing.T) {
	for k, v := range glossary {
		if utf8.RuneCountInString(k) < 2 {
			t.Errorf("%q: a single character", k)
		}
		for _, r := range k {
			if !isCJK(r) {
				t.Errorf("%q: %q is not CJK", k, r)
			}
		}
		if len(Terms(v)) == 0 {
			t.Errorf("%q → %q: no term", k, v)
		}
	}
}

func FuzzGlossaryWords(f *testing.F) {
	f.Add("怎样对一个切片进行排序?")
	f.Add("读写锁\xff读")
	f.Fuzz(func(t *testing.T, q string) {
		got := glossaryWords(q)
		if !utf8.ValidString(got) {
			t.Fatalf("glossaryWords(%q) = %q: invalid UTF-8", q, got)
		}
	})
}
