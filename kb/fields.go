package kb

import (
	"path"
	"strings"
)

// Field weights of the keyword pass. A chunk is indexed under the terms of
// several fields: its document's path, the headings and declarations it
// holds (and the one it sits in), and its text. A field's terms are repeated by its weight
// (the text's once), which is how BM25F weighs fields: a term's frequency
// counts weight times in a field of weight weight. Every backend indexes
// ChunkTerms, so every backend weighs fields alike.
const (
	// pathWeight: "net/http/client.go" names what the file is about.
	pathWeight = 3
	// declWeight: the identifiers a chunk declares and the headings it
	// holds (extra to their occurrence in the text).
	declWeight = 2
	// headingWeight: the heading or declaration the chunk sits in.
	headingWeight = 1
)

// IndexVersion names how chunks are analysed into terms (Terms and
// ChunkTerms); it is part of a Document's Hash, so a change of analysis
// re-indexes every document on the next add or reindex.
const IndexVersion = "t3"

// ChunkTerms are the terms the keyword pass matches a chunk on: those of
// its fields, each repeated by its weight (see pathWeight and the rest):
// the path of its document (c.Doc, without its extension), its heading,
// the names it declares and headings it holds, and its text.
func ChunkTerms(c Chunk) []string {
	return chunkAnalysis(c).terms()
}

// JoinedChunkTerms is ChunkTerms joined by spaces, made without listing
// them: what a full-text index that splits on spaces is given.
func JoinedChunkTerms(c Chunk) string {
	a := chunkAnalysis(c)
	n := 0
	for _, s := range a.spans {
		n += int(s.hi-s.lo) + 1
	}
	b := make([]byte, 0, n)
	for i, s := range a.spans {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, a.buf[s.lo:s.hi]...)
	}
	return string(b)
}

// chunkAnalysis analyses each field of c once and repeats its terms by
// the field's weight, in ChunkTerms's order.
func chunkAnalysis(c Chunk) *analyser {
	var a analyser
	a.buf = make([]byte, 0, len(c.Text)+len(c.Text)/2)
	a.spans = make([]span, 0, len(c.Text)/5)
	field := func(text string, weight int) {
		from := len(a.spans)
		a.words(text)
		to := len(a.spans)
		for range weight - 1 {
			a.spans = append(a.spans, a.spans[from:to]...)
		}
	}
	field(strings.TrimSuffix(c.Doc, path.Ext(c.Doc)), pathWeight)
	field(declared(c.Doc, c.Text), declWeight)
	field(c.Heading, headingWeight)
	field(c.Text, 1)
	return &a
}

// PathTerms are the terms of a document's path without its extension:
// "net/http/client.go" → net http client.
func PathTerms(p string) []string {
	return Terms(strings.TrimSuffix(p, path.Ext(p)))
}

// declared returns the names a chunk declares (top-level declarations of
// code: "func (t *T) Name(" gives T and Name) and the headings it holds
// (Markdown "#" lines, HTML <h1>…<h6>), one a line.
func declared(doc, text string) string {
	md := isMarkdown(doc)
	var decls strings.Builder
	for line := range strings.Lines(text) {
		if line == "" || line[0] == ' ' || line[0] == '\t' {
			continue
		}
		switch {
		case md:
			if headingLevel(line) > 0 {
				decls.WriteString(line)
			}
		case strings.HasPrefix(line, "<h") && len(line) > 2 && '1' <= line[2] && line[2] <= '6':
			decls.WriteString(line)
		case isDecl(line):
			decls.WriteString(declName(line))
			decls.WriteByte('\n')
		}
	}
	return decls.String()
}

// declName returns the names a declaration line declares: the first
// identifier after its keywords and, for a Go method, the receiver's type
// ("func (t *T) Name(" → "T Name").
func declName(line string) string {
	rest := line
	for {
		kw, after, ok := strings.Cut(rest, " ")
		if !ok || !declKeyword[kw] {
			break
		}
		rest = strings.TrimLeft(after, " ")
	}
	recv := ""
	if strings.HasPrefix(rest, "(") { // a Go method's receiver
		r, after, ok := strings.Cut(rest[1:], ")")
		if !ok {
			return ""
		}
		recv, rest = lastIdent(r), strings.TrimLeft(after, " ")
	}
	return recv + " " + firstIdent(rest)
}

// declKeyword are the words before a declared name.
var declKeyword = map[string]bool{
	"func": true, "type": true, "var": true, "const": true, "def": true, "class": true,
	"async": true, "function": true, "export": true, "interface": true, "fn": true,
	"pub": true, "impl": true, "struct": true, "enum": true, "trait": true, "mod": true,
	"public": true, "private": true, "protected": true, "static": true, "default": true,
	"abstract": true, "final": true, "let": true,
}

func firstIdent(s string) string {
	n := 0
	for n < len(s) && isASCIIWord(s[n]) {
		n++
	}
	return s[:n]
}

func lastIdent(s string) string {
	n := len(s)
	for n > 0 && isASCIIWord(s[n-1]) {
		n--
	}
	return s[n:]
}
