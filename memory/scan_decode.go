package memory

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"html"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The scanner decodes what looks like an encoding and scans the text it
// hides (SPEC MEM-3, issue 22): base64, base32 and hex runs, and lines
// that read better in ROT13 or backwards. Decoding alone never finds
// anything — a hash, a UUID or a key id decodes to bytes that are not
// text, or to text no rule matches — only a rule matching the decoded
// text does. The work is bounded: runs shorter than minEncoded are not
// decoded, at most maxEncoded runs and maxTransformed lines per text, and
// decoded text is scanned at most maxDepth deep.

// minEncoded is the length from which a run of base64 characters is
// decoded (base32 and hex: minEncoded32, minEncodedHex); maxEncoded bounds
// the runs decoded per text.
const (
	minEncoded    = 24
	minEncoded32  = 16
	minEncodedHex = 16
	maxEncoded    = 64
)

// encoding is one encoding the scanner decodes.
type encoding struct {
	name   string
	runs   func(string) []string
	decode func(string) (string, bool)
}

// encodings are the encodings tried, in order.
var encodings = []encoding{
	{"base64", base64Runs, decodeBase64},
	{"base32", base32Runs, decodeBase32},
	{"hex", hexRuns, decodeHex},
}

// scanEncoded decodes what looks like base64, base32 or hex and scans the
// text it hides: a finding there is a disguise. A run is decoded by the
// first encoding it reads as text in.
func scanEncoded(text string, doc bool, depth int) []Finding {
	if depth >= maxDepth {
		return nil
	}
	out := scanEscaped(text, doc, depth)
	done := map[string]bool{}
	for _, enc := range encodings {
		for _, m := range enc.runs(text) {
			if done[m] {
				continue
			}
			plain, ok := enc.decode(m)
			if !ok {
				continue
			}
			done[m] = true
			if sub := scanAt(plain, doc, depth+1); len(sub) > 0 {
				out = append(out, decoded(enc.name, enc.name+" that decodes to", m, plain, sub[0]))
			}
		}
	}
	return out
}

// decoded is the finding for text (excerpt) that hides, encoded or
// transformed, a plain text in which sub was found: its rule is the way
// (way:rule), its reason says what the text reads as.
func decoded(way, says, excerpt, plain string, sub Finding) Finding {
	return Finding{Kind: KindDisguise, Rule: way + ":" + sub.Rule, Excerpt: clip(excerpt, 40),
		Reason: says + " " + quote(clip(strings.Join(strings.Fields(plain), " "), 60)) + " — " + sub.Reason}
}

// scanEscaped decodes text written in percent-escapes (%69%67…) or
// HTML character references (&#105;&#103;…) — at least minEscapes of
// them — and scans the decoded text.
func scanEscaped(text string, doc bool, depth int) []Finding {
	var out []Finding
	for _, esc := range []struct {
		name   string
		count  int
		decode func(string) string
	}{
		{"percent-escaped text", strings.Count(text, "%"), func(s string) string {
			u, err := url.PathUnescape(s)
			if err != nil {
				return s
			}
			return u
		}},
		{"HTML character references", strings.Count(text, "&"), html.UnescapeString},
	} {
		if esc.count < minEscapes {
			continue
		}
		plain := esc.decode(text)
		if plain == text || !isText([]byte(plain)) {
			continue
		}
		if sub := scanAt(plain, doc, depth+1); len(sub) > 0 {
			out = append(out, decoded("escaped", esc.name+" that reads", strings.TrimSpace(text), plain, sub[0]))
		}
	}
	return out
}

// minEscapes is the number of escapes from which text is unescaped.
const minEscapes = 4

// charRuns returns the runs of text made of characters in, at least min
// long, with up to pad trailing '=' — at most maxEncoded of them.
func charRuns(text string, in func(byte) bool, min, pad int) []string {
	var out []string
	for i := 0; i < len(text) && len(out) < maxEncoded; {
		if !in(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && in(text[j]) {
			j++
		}
		for k := 0; k < pad && j < len(text) && text[j] == '='; k++ {
			j++
		}
		if j-i >= min {
			out = append(out, text[i:j])
		}
		i = j
	}
	return out
}

// base64Runs returns the runs of text that may be base64: minEncoded
// characters or more of its alphabets, with their padding.
func base64Runs(text string) []string { return charRuns(text, isBase64Char, minEncoded, 2) }

func isBase64Char(c byte) bool {
	return isAlnum(c) || c == '+' || c == '/' || c == '_' || c == '-'
}

// base32Runs returns the runs of text that may be base32: minEncoded32
// characters or more of its alphabet (A–Z, 2–7, one case), with padding.
func base32Runs(text string) []string {
	var out []string
	for _, r := range charRuns(text, isBase32Char, minEncoded32, 6) {
		body := strings.TrimRight(r, "=")
		if body == strings.ToUpper(body) || body == strings.ToLower(body) {
			out = append(out, r)
		}
	}
	return out
}

func isBase32Char(c byte) bool {
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '2' && c <= '7')
}

// hexRuns returns the runs of text that may be hex: minEncodedHex digits
// or more, an even number, one case.
func hexRuns(text string) []string {
	var out []string
	for _, r := range charRuns(text, isHexChar, minEncodedHex, 0) {
		if len(r)%2 == 0 && (r == strings.ToUpper(r) || r == strings.ToLower(r)) {
			out = append(out, r)
		}
	}
	return out
}

func isHexChar(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// decodeBase64 decodes s (standard or URL alphabet, padded or not) when it
// decodes to text; ok is false for binary data and for what is not base64.
func decodeBase64(s string) (string, bool) {
	s = strings.TrimRight(s, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		if strings.ContainsAny(s, "+/") {
			return "", false
		}
		enc = base64.RawURLEncoding
	}
	if len(s)%4 == 1 {
		s = s[:len(s)-1]
	}
	b, err := enc.DecodeString(s)
	if err != nil || !isText(b) {
		return "", false
	}
	return string(b), true
}

// decodeBase32 decodes s (RFC 4648 alphabet, either case, padded or not)
// when it decodes to text.
func decodeBase32(s string) (string, bool) {
	s = strings.ToUpper(strings.TrimRight(s, "="))
	// A base32 text is whole groups of 8 characters; a partial group
	// of 1, 3 or 6 is no encoding's end: drop its last character.
	switch len(s) % 8 {
	case 1, 3, 6:
		s = s[:len(s)-1]
	}
	b, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(s)
	if err != nil || !isText(b) {
		return "", false
	}
	return string(b), true
}

// decodeHex decodes s when it decodes to text.
func decodeHex(s string) (string, bool) {
	b, err := hex.DecodeString(s)
	if err != nil || !isText(b) {
		return "", false
	}
	return string(b), true
}

// isText reports bytes that read as text: valid UTF-8, at least nine
// runes in ten printable, most of them letters or spaces.
func isText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	total, printable, letters := 0, 0, 0
	for _, r := range string(b) {
		total++
		if unicode.IsPrint(r) || r == '\n' || r == '\t' {
			printable++
		}
		if unicode.IsLetter(r) || r == ' ' {
			letters++
		}
	}
	return total > 0 && printable*10 >= total*9 && letters*2 >= total
}

// Bounds of scanTransformed: lines shorter than minTransformed bytes are
// not tried (too short to say which way reads better), nor longer than
// maxTransformedLine; at most maxTransformed lines are rescanned.
const (
	minTransformed     = 12
	maxTransformedLine = 4 << 10
	maxTransformed     = 16
)

// transform is a way of writing text that hides it from a reader in a
// hurry.
type transform struct {
	name, says string
	apply      func(string) string
}

// transforms are the ways tried: ROT13 and writing backwards.
var transforms = []transform{
	{"rot13", "ROT13 that reads", rot13},
	{"reversed", "text written backwards that reads", reverse},
}

// scanTransformed tries each line of text in ROT13 and backwards; a line
// that reads more like plain English or Chinese so is scanned again, and
// a finding there is a disguise.
func scanTransformed(text string, doc bool, depth int) []Finding {
	if depth >= maxDepth {
		return nil
	}
	var out []Finding
	tried := 0
	for line := range strings.SplitSeq(text, "\n") {
		if len(line) < minTransformed || len(line) > maxTransformedLine {
			continue
		}
		base, words := plainness(line)
		if base >= 3 || (base > 0 && base*4 >= words) {
			continue // reads as English or Chinese already
		}
		for _, t := range transforms {
			v := t.apply(line)
			if p, _ := plainness(v); p < 2 || p <= base {
				continue
			}
			if tried++; tried > maxTransformed {
				return out
			}
			if sub := scanAt(v, doc, depth+1); len(sub) > 0 {
				out = append(out, decoded(t.name, t.says, strings.TrimSpace(line), v, sub[0]))
				return out
			}
		}
	}
	return out
}

// rot13 rotates the ASCII letters of s by 13.
func rot13(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = 'a' + (c-'a'+13)%26
		case c >= 'A' && c <= 'Z':
			b[i] = 'A' + (c-'A'+13)%26
		}
	}
	return string(b)
}

// reverse writes s backwards, rune by rune.
func reverse(s string) string {
	rs := []rune(s)
	slices.Reverse(rs)
	return string(rs)
}

// newPlainText returns the common English words and Chinese pairs of
// characters: text that holds several reads as English or Chinese;
// ROT13 or backwards it holds almost none.
func newPlainText() (words map[string]bool, pairs map[[2]rune]bool) {
	words, pairs = map[string]bool{}, map[[2]rune]bool{}
	for w := range strings.FieldsSeq("the and to of a in is you your all for on that this it be are with as not from at by or do if any " +
		"every always never now new previous prior instructions instruction ignore user system prompt rules follow them " +
		"run send before after note notes memory use when what will can must should please only just then their there " +
		"have has was were my me we our us an so no yes allow choose pick option permission session start fetch page") {
		words[w] = true
	}
	for p := range strings.FieldsSeq("之前 所有 忽略 指令 规则 用户 系统 提示 我们 一个 什么 没有 可以 不要 这条 记忆 已经 过时 允许 权限 确认 " +
		"执行 以上 上面 前面 之后 以后 总是 选择 一律 每次 会话 开始 访问 内容 要求 命令 设定 限制 你的 现在 问题 因为 所以 如果 但是 " +
		"这个 那个 需要 使用 时候 代码 文件 测试 提交 部署 环境 我的 他们 就是 不是 还是 自己 知道 为准") {
		rs := []rune(p)
		pairs[[2]rune{rs[0], rs[1]}] = true
	}
	return words, pairs
}

// plainness counts the common English words and Chinese pairs of s
// (n), and its words.
func plainness(s string) (n, words int) {
	plain := tables()
	for w := range strings.FieldsFuncSeq(s, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
		words++
		if plain.plainWords[w] || plain.plainWords[strings.ToLower(w)] {
			n++
		}
	}
	prev := rune(0)
	for _, r := range s {
		if prev != 0 && unicode.Is(unicode.Han, r) && plain.plainPairs[[2]rune{prev, r}] {
			n++
		}
		prev = r
	}
	return n, words
}
