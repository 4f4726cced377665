package memory

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// invisibleNames names the invisible and bidirectional characters a
// finding mentions; others are named by their block.
var invisibleNames = map[rune]string{
	0x00AD: "SOFT HYPHEN", 0x034F: "COMBINING GRAPHEME JOINER", 0x061C: "ARABIC LETTER MARK",
	0x115F: "HANGUL CHOSEONG FILLER", 0x1160: "HANGUL JUNGSEONG FILLER", 0x180E: "MONGOLIAN VOWEL SEPARATOR",
	0x200B: "ZERO WIDTH SPACE", 0x200C: "ZERO WIDTH NON-JOINER", 0x200D: "ZERO WIDTH JOINER",
	0x200E: "LEFT-TO-RIGHT MARK", 0x200F: "RIGHT-TO-LEFT MARK", 0x2028: "LINE SEPARATOR", 0x2029: "PARAGRAPH SEPARATOR",
	0x202A: "LEFT-TO-RIGHT EMBEDDING", 0x202B: "RIGHT-TO-LEFT EMBEDDING", 0x202C: "POP DIRECTIONAL FORMATTING",
	0x202D: "LEFT-TO-RIGHT OVERRIDE", 0x202E: "RIGHT-TO-LEFT OVERRIDE", 0x2060: "WORD JOINER",
	0x2061: "FUNCTION APPLICATION", 0x2062: "INVISIBLE TIMES", 0x2063: "INVISIBLE SEPARATOR", 0x2064: "INVISIBLE PLUS",
	0x2066: "LEFT-TO-RIGHT ISOLATE", 0x2067: "RIGHT-TO-LEFT ISOLATE", 0x2068: "FIRST STRONG ISOLATE",
	0x2069: "POP DIRECTIONAL ISOLATE", 0x3164: "HANGUL FILLER", 0xFEFF: "ZERO WIDTH NO-BREAK SPACE",
	0xFFA0: "HALFWIDTH HANGUL FILLER",
}

// invisibleClass says what kind of hidden character r is, "" for none.
func invisibleClass(r rune) string {
	switch {
	case r < 0x20 && r != '\t' && r != '\n' && r != '\r', r == 0x7F, r >= 0x80 && r <= 0x9F:
		return "control character"
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C:
		return "bidirectional control"
	case r >= 0xE0000 && r <= 0xE007F:
		return "tag character"
	case isVariationSelector(r):
		return "variation selector"
	case invisibleNames[r] != "", r >= 0x2060 && r <= 0x206F, r >= 0x180B && r <= 0x180F,
		r >= 0xFFF9 && r <= 0xFFFB, r >= 0x1BCA0 && r <= 0x1BCA3, r >= 0x1D173 && r <= 0x1D17A,
		r == 0x17B4, r == 0x17B5:
		return "invisible character"
	}
	return ""
}

func isVariationSelector(r rune) bool {
	return (r >= 0xFE00 && r <= 0xFE0F) || (r >= 0xE0100 && r <= 0xE01EF)
}

// isPictograph reports a rune emoji sequences join: pictographs, dingbats
// and symbols, skin tones.
func isPictograph(r rune) bool {
	return r >= 0x1F000 || (r >= 0x2190 && r <= 0x2BFF) || r == 0x00A9 || r == 0x00AE || r == 0x203C || r == 0x2049 ||
		(r >= 0x2100 && r <= 0x214F) || (r >= 0x3030 && r <= 0x303D) || r == 0x3297 || r == 0x3299
}

// allowedInvisible reports the hidden characters ordinary text carries:
// a byte-order mark at the start, a joiner inside an emoji sequence, a
// non-joiner between letters of the scripts that use it, one variation
// selector after an emoji, a keycap base or an ideograph, and the tags of
// a subdivision flag (🏴 + tag letters + cancel tag).
func allowedInvisible(rs []rune, i int) bool {
	r := rs[i]
	prev, next := rune(0), rune(0)
	if i > 0 {
		prev = rs[i-1]
	}
	if i+1 < len(rs) {
		next = rs[i+1]
	}
	switch {
	case r == 0xFEFF:
		return i == 0
	case r == 0x200D:
		return (isPictograph(prev) || isVariationSelector(prev)) && isPictograph(next)
	case r == 0x200C:
		return prev > 0x2FF && next > 0x2FF && unicode.IsLetter(prev) && unicode.IsLetter(next)
	case isVariationSelector(r):
		base := isPictograph(prev) || unicode.Is(unicode.Han, prev) || strings.ContainsRune("0123456789#*", prev)
		return base && !isVariationSelector(next)
	case r >= 0xE0020 && r <= 0xE007F:
		return inFlagTag(rs, i)
	}
	return false
}

// inFlagTag reports whether the tag character at i belongs to a
// subdivision flag: a waving black flag, up to seven tag letters or
// digits, and a cancel tag.
func inFlagTag(rs []rune, i int) bool {
	start := i
	for start > 0 && rs[start-1] >= 0xE0020 && rs[start-1] <= 0xE007E {
		start--
	}
	end := i
	for end < len(rs) && rs[end] >= 0xE0020 && rs[end] <= 0xE007E {
		end++
	}
	n := end - start
	return start > 0 && rs[start-1] == 0x1F3F4 && end < len(rs) && rs[end] == 0xE007F && n >= 2 && n <= 7
}

// scanInvisible finds the hidden characters of text: one finding listing
// them, and one more for text hidden in tag characters (which it decodes
// and scans).
func scanInvisible(text string, doc bool, depth int) []Finding {
	if !hasSuspectRune(text) {
		return nil
	}
	rs := []rune(text)
	counts := map[rune]int{}
	first := -1
	var hidden strings.Builder
	for i, r := range rs {
		if invisibleClass(r) == "" || allowedInvisible(rs, i) {
			continue
		}
		if first < 0 {
			first = i
		}
		counts[r]++
		if r >= 0xE0020 && r <= 0xE007E {
			hidden.WriteRune(r - 0xE0000)
		}
	}
	if first < 0 {
		return nil
	}
	keys := slices.Sorted(func(yield func(rune) bool) {
		for r := range counts {
			if !yield(r) {
				return
			}
		}
	})
	names := make([]string, 0, len(keys))
	for _, r := range keys {
		n := fmt.Sprintf("U+%04X %s", r, runeName(r))
		if counts[r] > 1 {
			n += fmt.Sprintf(" ×%d", counts[r])
		}
		names = append(names, n)
		if len(names) == 4 && len(keys) > 4 {
			names = append(names, fmt.Sprintf("and %d more kinds", len(keys)-4))
			break
		}
	}
	out := []Finding{{Kind: KindInvisible, Rule: "invisible-unicode", Excerpt: visibleExcerpt(rs, first),
		Reason: "holds invisible or bidirectional characters (" + strings.Join(names, ", ") +
			"), which hide or reorder text people read; remove them"}}
	if h := strings.TrimSpace(hidden.String()); h != "" {
		reason := "hides text in Unicode tag characters: " + quote(clip(h, 60))
		if sub := scanAt(h, doc, depth+1); len(sub) > 0 {
			reason += " — " + sub[0].Reason
		}
		out = append(out, Finding{Kind: KindInvisible, Rule: "tag-smuggling", Reason: reason, Excerpt: clip(h, excerptRunes)})
	}
	return out
}

// hasSuspectRune is a fast test for text that may hold hidden
// characters: any control byte, or any rune beyond ASCII.
func hasSuspectRune(text string) bool {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= 0x80 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F {
			return true
		}
	}
	return false
}

// runeName names a hidden rune for people.
func runeName(r rune) string {
	if n := invisibleNames[r]; n != "" {
		return n
	}
	switch c := invisibleClass(r); c {
	case "tag character":
		if r >= 0xE0020 && r <= 0xE007E {
			return fmt.Sprintf("TAG %q", r-0xE0000)
		}
		return "CANCEL TAG"
	default:
		return strings.ToUpper(c)
	}
}

// visibleExcerpt is the text around rs[at] with hidden characters shown
// as ⟨U+XXXX⟩.
func visibleExcerpt(rs []rune, at int) string {
	start := max(0, at-20)
	end := min(len(rs), at+40)
	var b strings.Builder
	for i := start; i < end; i++ {
		r := rs[i]
		if invisibleClass(r) != "" && !allowedInvisible(rs, i) {
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
			continue
		}
		if r == '\n' || r == '\t' || r == '\r' {
			r = ' '
		}
		b.WriteRune(r)
	}
	return b.String()
}

// fold rewrites text for a second look at what disguises hide: hidden
// characters and combining marks dropped; full-width, mathematical,
// circled and small-capital letters, Latin letters with accents, and
// Cyrillic and Greek letters that look like Latin ones made plain Latin;
// digits standing for letters inside words (1gn0r3) made letters. Case is
// kept.
func fold(text string) string { return unleet(foldChars(text)) }

// foldChars is fold without unleet: hidden characters and combining
// marks dropped, look-alike letters made plain.
func foldChars(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	for _, r := range text {
		if r < 0x80 {
			b.WriteByte(byte(r))
			continue
		}
		if invisibleClass(r) != "" || (r >= 0x0300 && r <= 0x036F) || (r >= 0x20D0 && r <= 0x20FF) || (r >= 0xFE20 && r <= 0xFE2F) {
			continue
		}
		if f := foldRune(r); f != 0 {
			b.WriteRune(f)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// foldRune returns the plain character r stands for, 0 when it is one.
func foldRune(r rune) rune {
	switch {
	case r >= 0xFF01 && r <= 0xFF5E: // full-width ASCII
		return r - 0xFEE0
	case r == 0x3000:
		return ' '
	case r >= 0x1D400 && r <= 0x1D6A3: // mathematical alphanumerics: 13 styles of A–Z a–z
		if n := (r - 0x1D400) % 52; n < 26 {
			return 'A' + n
		} else {
			return 'a' + n - 26
		}
	case r >= 0x1D7CE && r <= 0x1D7FF:
		return '0' + (r-0x1D7CE)%10
	case r >= 0x24B6 && r <= 0x24CF:
		return 'A' + r - 0x24B6
	case r >= 0x24D0 && r <= 0x24E9:
		return 'a' + r - 0x24D0
	case r >= 0x249C && r <= 0x24B5:
		return 'a' + r - 0x249C
	case r >= 0x1F130 && r <= 0x1F149:
		return 'A' + r - 0x1F130
	case r >= 0x1F150 && r <= 0x1F169:
		return 'A' + r - 0x1F150
	case r >= 0x1F170 && r <= 0x1F189:
		return 'A' + r - 0x1F170
	}
	return confusables()[r]
}

// confusables maps letters that look like Latin ones — Cyrillic, Greek,
// small capitals, Latin with accents — to the plain letter.
var confusables = sync.OnceValue(func() map[rune]rune {
	m := map[rune]rune{}
	add := func(from, to string) {
		f, t := []rune(from), []rune(to)
		if len(f) != len(t) {
			panic("confusables: " + from)
		}
		for i := range f {
			m[f[i]] = t[i]
		}
	}
	// Cyrillic
	add("аеорсухіјѕԁԛԝһӏкмнтвгпьѵ", "aeopcyxijsdqwhlkmhtbrnbv")
	add("АВЕКМНОРСТУХІЈЅԚԜ", "ABEKMHOPCTYXIJSQW")
	// Greek
	add("αοριτυνκχεηω", "aopitu"+"vkxenw")
	add("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHIKMNOPTYX")
	// small capitals, Roman numerals, letter-like symbols and other
	// Latin look-alikes
	add("ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢıȷℓɡƒɑℎℯℊℴ", "abcdefghijklmnoprstuvwyzijlgfaheg"+"o")
	add("ⅠⅤⅩⅬⅭⅮⅯⅰⅴⅹⅼⅽⅾⅿ", "IVXLCDMivxlcdm")
	// Latin letters with accents
	add("àáâãäåāăąçćĉċčďđèéêëēĕėęěĝğġģĥħìíîïĩīĭįĵķĺļľłñńņňòóôõöøōŏőŕŗřśŝşšţťŧùúûüũūŭůűųŵýÿŷźżž",
		"aaaaaaaaaccccddeeeeeeeeegggghhiiiiiiiijklllnnnnnoooooooooorrrsssstttuuuuuuuuuuwyyyzzz")
	add("ÀÁÂÃÄÅĀĂĄÇĆĈĊČĎĐÈÉÊËĒĔĖĘĚĜĞĠĢĤĦÌÍÎÏĨĪĬĮĴĶĹĻĽŁÑŃŅŇÒÓÔÕÖØŌŎŐŔŖŘŚŜŞŠŢŤŦÙÚÛÜŨŪŬŮŰŲŴÝŸŶŹŻŽ",
		"AAAAAAAAACCCCCDDEEEEEEEEEGGGGHHIIIIIIIIJKLLLLNNNNOOOOOOOOORRRSSSSTTTUUUUUUUUUUWYYYZZZ")
	return m
})

// leet maps the digits and symbols that stand for letters in words like
// 1gn0r3 or @lw@y$; 1 is read as one (i, or l where readsAsL says so).
func leet(c, one byte) byte {
	switch c {
	case '0':
		return 'o'
	case '1':
		return one
	case '3':
		return 'e'
	case '4', '@':
		return 'a'
	case '5', '$':
		return 's'
	case '7':
		return 't'
	}
	return 0
}

// unleet replaces the digits 0 1 3 4 5 7 and the symbols @ $ with the
// letters they stand for, in the words of two or more characters that mix
// ASCII letters with them and no other digit (1gn0r3, th3, @lw@y$; not
// sha256, k8s) — and only in a text where one of them has such a
// character before its end (ign0re, not go1 or md5 alone), so that
// ordinary identifiers are left alone. A leading @ or $ counts only
// before a lower-case letter ($HOME is a variable), and never makes a
// text leetspeak by itself (@alice). 1 becomes i, or l in a word that
// reads as a word of orders only so (readsAsL).
func unleet(s string) string {
	isWord := func(c byte) bool { return isAlnum(c) || c == '@' || c == '$' }
	words := func(yield func(i, j int) bool) {
		for i := 0; i < len(s); {
			if !isWord(s[i]) {
				i++
				continue
			}
			j := i
			for j < len(s) && isWord(s[j]) {
				j++
			}
			if !yield(i, j) {
				return
			}
			i = j
		}
	}
	strong := false
	for i, j := range words {
		if ok, inner := leetWord(s[i:j]); ok && inner {
			strong = true
			break
		}
	}
	if !strong {
		return s
	}
	out := []byte(s)
	for i, j := range words {
		if ok, _ := leetWord(s[i:j]); !ok {
			continue
		}
		one := byte('i')
		if strings.IndexByte(s[i:j], '1') >= 0 && readsAsL(s[i:j]) {
			one = 'l'
		}
		for k := i; k < j; k++ {
			if l := leet(s[k], one); l != 0 {
				out[k] = l
			}
		}
	}
	return string(out)
}

// leetWord says whether w is a leet word (unleet) and whether one of its
// leet characters comes after its start and before its end. A leading @
// or $ counts before a lower-case letter only ($HOME is a variable).
func leetWord(w string) (ok, inner bool) {
	letters, leets := 0, 0
	for k := 0; k < len(w); k++ {
		c := w[k]
		switch {
		case k == 0 && (c == '@' || c == '$'):
			if len(w) > 1 && w[1] >= 'a' && w[1] <= 'z' {
				leets++
			}
		case leet(c, 'i') != 0:
			leets++
			if k > 0 && k < len(w)-1 || k == 0 && c >= '0' && c <= '9' {
				inner = true
			}
		case c >= '0' && c <= '9':
			return false, false
		default:
			letters++
		}
	}
	return letters > 0 && leets > 0 && len(w) >= 2, inner
}

// newLeetWords returns words of orders with an l, for the words where 1
// stands for l (ru135, 4ll0w).
func newLeetWords() map[string]bool {
	m := map[string]bool{}
	for w := range strings.FieldsSeq("rules rule all allow allowed always follow tools tool files file please only model role roles " +
		"limits limit unlimited fully helpful developer leak leaks reveal deployed credentials also else tell told " +
		"guidelines guideline rely filters filter unfiltered like will shall") {
		m[w] = true
	}
	return m
}

// readsAsL reports whether a leet word w reads as a word of orders with
// 1 as l and not with 1 as i.
func readsAsL(w string) bool {
	asL, asI := []byte(w), []byte(w)
	for k := range asL {
		if l := leet(asL[k], 'l'); l != 0 {
			asL[k] = l
		}
		if l := leet(asI[k], 'i'); l != 0 {
			asI[k] = l
		}
	}
	words := tables().leetWords
	return words[strings.ToLower(string(asL))] && !words[strings.ToLower(string(asI))]
}

func isAlnum(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// quote quotes s for a message, hidden characters escaped.
func quote(s string) string { return "“" + strings.Map(showRune, s) + "”" }

// showRune keeps printable runes and replaces the others with a dot.
func showRune(r rune) rune {
	if r == utf8.RuneError || (!unicode.IsPrint(r) && r != ' ') {
		return '·'
	}
	return r
}
