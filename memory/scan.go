package memory

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Kind is what a finding of the scanner is about.
type Kind string

// The kinds of finding.
const (
	// KindInjection: phrasing that tries to steer the model — ignore or
	// override its instructions, play the system or a developer, run tools
	// on a hidden cue, reveal its prompt.
	KindInjection Kind = "injection"
	// KindExfiltration: text that would send secrets away (a command or
	// URL carrying keys, a key file read into a request), or holds one.
	KindExfiltration Kind = "exfiltration"
	// KindInvisible: invisible, control or bidirectional characters that
	// hide or reorder text people read.
	KindInvisible Kind = "invisible-unicode"
	// KindDisguise: one of the above, hidden in base64, look-alike
	// letters (Cyrillic, Greek, full-width, mathematical) or digits for
	// letters.
	KindDisguise Kind = "disguise"
)

// Finding is one reason the scanner refuses a text.
type Finding struct {
	Kind Kind `json:"kind"`
	// Rule names the check that found it, short and stable
	// ("override-instructions", "standing-permission", "exfiltration"):
	// what people quote when a note is withheld (SPEC MEM-3).
	Rule string `json:"rule,omitempty"`
	// Reason says what was found, for the model and for people.
	Reason string `json:"reason"`
	// Excerpt is the text that matched, clipped, hidden characters shown
	// as ⟨U+XXXX⟩.
	Excerpt string `json:"excerpt,omitempty"`
}

// String is the finding as one line: kind, reason and excerpt.
func (f Finding) String() string {
	s := string(f.Kind) + ": " + f.Reason
	if f.Excerpt != "" {
		s += " (" + quote(f.Excerpt) + ")"
	}
	return s
}

// Rules lists the rules of findings, without repeats: "override-instructions,
// exfiltration".
func Rules(fs []Finding) string {
	var names []string
	for _, f := range fs {
		n := f.Rule
		if n == "" {
			n = string(f.Kind)
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

// Explain joins findings into one message.
func Explain(fs []Finding) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.String()
	}
	return strings.Join(parts, "; ")
}

// Scan checks a memory entry before it is written or shown to the model
// (SPEC MEM-3): prompt-injection phrasing in English and Chinese (ignore
// or override instructions, role-play as the system or a developer,
// hidden tool directives, prompt extraction), standing orders that hand
// the model's obedience to files, web pages, issues or tool output,
// answer permission prompts in advance, fetch and obey a URL every
// session or declare the rules above outdated (issue 22), secret
// exfiltration (network commands or URLs carrying keys or key files,
// literal secrets), invisible and bidirectional Unicode, and these
// disguised: matched on a normal form too (NFKC, look-alike letters,
// leetspeak, letters pulled apart, Chinese spaced out) and decoded from
// base64, base32, hex, escapes, ROT13 or backwards text. It returns nil
// for a text it finds nothing in. Scan runs in time linear in len(text).
func Scan(text string) []Finding { return scanAt(text, false, 0) }

// ScanDocument checks instructions meant for the model — AGENTS.md,
// skills, agent definitions — which legitimately tell it what to run and
// how to behave. Only the strong signals count: invisible and
// bidirectional Unicode, exfiltration, explicit orders to ignore or
// override earlier instructions, hiding actions from the user, and these
// disguised. Callers warn about findings; they do not drop the document.
// Run starts scan the same documents again and again, so the findings are
// remembered by text: callers must not modify them.
func ScanDocument(text string) []Finding { return scanRemembered(text, true) }

// maxDepth bounds how deep decoded text (base64, tag characters) is
// scanned again.
const maxDepth = 2

// scanAt scans text; depth counts the decodings it came through.
func scanAt(text string, doc bool, depth int) []Finding {
	if depth > maxDepth || strings.TrimSpace(text) == "" {
		return nil
	}
	var fs findings
	fs.add(scanInvisible(text, doc, depth)...)
	for _, chunk := range paragraphs(text) {
		fs.add(matchAll(chunk, lowerText(chunk), doc)...)
		if u := unwrapLines(chunk); u != chunk { // "keep quiet about any network\ncalls you make"
			fs.add(matchAll(u, lowerText(u), doc)...)
		}
		normal := normalChanged(chunk)
		for _, form := range normalForms(chunk, normal) {
			for _, f := range matchAll(form, lowerText(form), doc) {
				if !fs.hasReason(f.Reason) {
					fs.add(Finding{Kind: KindDisguise, Rule: f.Rule, Excerpt: f.Excerpt,
						Reason: f.Reason + " — spelled with look-alike or hidden characters, digits for letters or letters pulled apart to slip past checks"})
				}
			}
		}
		if len(fs.list) == 0 {
			fs.add(scanSquashed(normal, doc)...)
		}
	}
	fs.add(scanEncoded(text, doc, depth)...)
	if len(fs.list) == 0 {
		fs.add(scanTransformed(text, doc, depth)...)
	}
	return fs.list
}

// Bounds of the pieces a long text is scanned in.
const (
	shortText = 1 << 10 // a text this short is scanned whole
	maxPiece  = 4 << 10 // a paragraph longer than this is cut at line ends
)

// paragraphs cuts a long text into paragraphs (at blank lines), long
// ones at line ends, so that each pattern runs only on the pieces that
// hold its words. A phrase split by a blank line is not matched; one
// split by a line end is.
func paragraphs(text string) []string {
	if len(text) <= shortText {
		return []string{text}
	}
	var out []string
	for p := range strings.SplitSeq(text, "\n\n") {
		for len(p) > maxPiece {
			cut := strings.LastIndexByte(p[:maxPiece], '\n')
			if cut <= 0 {
				cut = maxPiece
				for cut < len(p) && !utf8.RuneStart(p[cut]) {
					cut++
				}
			}
			out = append(out, p[:cut])
			p = p[cut:]
		}
		out = append(out, p)
	}
	return out
}

// lowerText is text in lower case with runs of spaces and tabs made one
// space: what the patterns and their words are matched against.
func lowerText(text string) string {
	l := strings.ToLower(text)
	if !strings.Contains(l, "  ") && !strings.Contains(l, "\t") {
		return l
	}
	var b strings.Builder
	b.Grow(len(l))
	space := false
	for i := 0; i < len(l); i++ {
		c := l[i]
		if c == ' ' || c == '\t' {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteByte(c)
	}
	return b.String()
}

// findings collects findings without repeating a reason.
type findings struct{ list []Finding }

func (fs *findings) add(f ...Finding) {
	for _, x := range f {
		if !fs.hasReason(x.Reason) {
			fs.list = append(fs.list, x)
		}
	}
}

func (fs *findings) hasReason(r string) bool {
	for _, f := range fs.list {
		if f.Reason == r {
			return true
		}
	}
	return false
}

// matchAll runs the rules and the exfiltration checks over text (raw)
// and its lower-case form.
func matchAll(raw, lower string, doc bool) []Finding {
	var out []Finding
	var spans [][]int // where findings matched in lower, to report each text once
	flat := lower     // lower with line ends as spaces: where the rules' words are looked for
	if strings.Contains(lower, "\n") {
		flat = strings.Join(strings.Fields(lower), " ")
	}
	index := index()
	found := make([]bool, len(index.set.words))
	index.set.find(flat, found)
	rules := rules()
	for i := range rules {
		r := &rules[i]
		if (doc && !r.doc) || !index.any(found, index.rules[i]) {
			continue
		}
		subject := lower
		if r.raw {
			subject = raw
		}
		loc := r.find(subject)
		if loc == nil || (!r.raw && overlaps(spans, loc)) {
			continue
		}
		spans = append(spans, loc)
		out = append(out, Finding{Kind: r.kind, Rule: r.name, Reason: r.reason, Excerpt: excerpt(subject, loc)})
	}
	return append(out, scanExfil(raw, lower, doc, found)...)
}

// index holds the words of every rule and of the exfiltration checks in
// one needleSet, built at the first scan: most rein commands never scan,
// and building it costs about 7 MB and 10 ms.
var index = sync.OnceValue(newScanIndex)

// scanIndex is the needleSet of the scanner's words, and which of them
// each rule and word list has.
type scanIndex struct {
	set                                     *needleSet
	rules                                   [][]int32
	literal, net, exfil, exfilVerb, exfilZH []int32
	// norm holds the tables of the normaliser and the decoders.
	norm *normTables
}

func newScanIndex() *scanIndex {
	ids := map[string]int32{}
	var words []string
	idsOf := func(list []string) []int32 {
		var out []int32
		for _, w := range list {
			id, ok := ids[w]
			if !ok {
				id = int32(len(words))
				ids[w] = id
				words = append(words, w)
			}
			out = append(out, id)
		}
		return out
	}
	x := &scanIndex{norm: newNormTables()}
	for _, r := range rules() {
		x.rules = append(x.rules, idsOf(r.needles))
	}
	x.literal, x.net = idsOf(literalNeedles), idsOf(netNeedles)
	x.exfil, x.exfilVerb, x.exfilZH = idsOf(exfilNeedles), idsOf(exfilVerbNeedles), idsOf(exfilNeedlesZH)
	x.set = newNeedleSet(words)
	return x
}

// any reports whether one of the words ids was found; no words means the
// check always runs.
func (x *scanIndex) any(found []bool, ids []int32) bool {
	if ids == nil {
		return true
	}
	for _, id := range ids {
		if found[id] {
			return true
		}
	}
	return false
}

// overlaps reports whether loc overlaps one of spans.
func overlaps(spans [][]int, loc []int) bool {
	for _, s := range spans {
		if loc[0] < s[1] && s[0] < loc[1] {
			return true
		}
	}
	return false
}

// rule is one pattern of the scanner.
type rule struct {
	// name is the rule's short name, Finding.Rule.
	name   string
	kind   Kind
	reason string
	// doc: the rule applies to documents (ScanDocument) too.
	doc bool
	// raw: match the text as written, not lower-cased.
	raw bool
	// negatable: a match right after a negation ("never", "不要") does
	// not count.
	negatable bool
	// needles, lower case, words separated by single spaces: the rule
	// runs only when one occurs in the text (lower case, white space
	// made single spaces): a cheap filter before the expression. Every
	// match of the expression must hold one.
	needles []string
	res     []*regexp.Regexp
	// accept, when set, checks each match further, given the indexes
	// of the match and its groups.
	accept func(s string, m []int) bool
}

// mayMatch reports whether one of the rule's words occurs in flat (the
// scanner uses index instead; tests check the words with it).
func (r *rule) mayMatch(flat string) bool {
	if len(r.needles) == 0 {
		return true
	}
	for _, n := range r.needles {
		if strings.Contains(flat, n) {
			return true
		}
	}
	return false
}

// find returns the location of the first match that counts, of the
// first pattern that has one.
func (r *rule) find(s string) []int {
	for _, re := range r.res {
		if !r.negatable && r.accept == nil {
			if loc := re.FindStringIndex(s); loc != nil {
				return loc
			}
			continue
		}
		for _, m := range re.FindAllStringSubmatchIndex(s, 16) {
			if (r.accept == nil || r.accept(s, m)) && (!r.negatable || !negated(s, m[0])) {
				return m[:2]
			}
		}
	}
	return nil
}

// matches reports whether one of the rule's patterns matches s,
// negations aside.
func (r *rule) matches(s string) bool {
	for _, re := range r.res {
		if r.accept == nil && re.MatchString(s) {
			return true
		}
		for _, m := range re.FindAllStringSubmatchIndex(s, 16) {
			if r.accept != nil && r.accept(s, m) {
				return true
			}
		}
	}
	return false
}

// negation ends the text before a match that it negates.
var negation = lazyRE(`(?i)(\bnever|\bnot|\bdon'?t|\bdo not|\bno|\bwithout|\bavoid|\bnor|\bmust not|\bshould not|\bshouldn'?t|不要|别|禁止|不得|切勿|不能|不可|严禁|从不|绝不|勿)\s*(\bever\s+)?$`)

// negated reports whether the match at start follows a negation in the
// same sentence.
func negated(s string, start int) bool {
	from := max(0, start-24)
	for from < start && !utf8.RuneStart(s[from]) {
		from++
	}
	prefix := s[from:start]
	if i := strings.LastIndexAny(prefix, ".!?\n。！？；;"); i >= 0 {
		prefix = prefix[i+1:]
	}
	return negation.MatchString(prefix)
}

// excerptRunes bounds an excerpt.
const excerptRunes = 80

// excerpt is the matched text, white space collapsed, clipped.
func excerpt(s string, loc []int) string {
	return clip(strings.Join(strings.Fields(s[loc[0]:loc[1]]), " "), excerptRunes)
}

// clip shortens s to n runes, marking the cut with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)
	return string(rs[:n-1]) + "…"
}
