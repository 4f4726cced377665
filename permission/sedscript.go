package permission

import "strings"

// sedScript reads a sed script for the commands that read files (r, R),
// write them (w, W, s///w) or run programs (e, s///e). What it cannot read
// counts as running a program: the check errs on the side of asking.
func sedScript(s string) []escalation {
	sc := sedScanner{s: s}
	for sc.i < len(sc.s) {
		if e, ok := sc.command(); ok {
			if e.eff != "" {
				return []escalation{e}
			}
			continue
		}
		return []escalation{{opt: "a sed script rein cannot read", eff: effectRuns}}
	}
	return nil
}

type sedScanner struct {
	s string
	i int
}

func (sc *sedScanner) peek() byte {
	if sc.i < len(sc.s) {
		return sc.s[sc.i]
	}
	return 0
}

func (sc *sedScanner) blanks() {
	for sc.i < len(sc.s) && strings.IndexByte(" \t\n;", sc.s[sc.i]) >= 0 {
		sc.i++
	}
}

// toEOL skips to the end of the line (a, i, c text; file names).
func (sc *sedScanner) toEOL() string {
	start := sc.i
	for sc.i < len(sc.s) && sc.s[sc.i] != '\n' {
		if sc.s[sc.i] == '\\' {
			sc.i++
		}
		sc.i++
	}
	return strings.TrimSpace(sc.s[start:min(sc.i, len(sc.s))])
}

// delimited skips text up to the unescaped delimiter d; false when there is
// none.
func (sc *sedScanner) delimited(d byte) bool {
	for sc.i < len(sc.s) {
		c := sc.s[sc.i]
		sc.i++
		switch c {
		case '\\':
			sc.i++
		case d:
			return true
		}
	}
	return false
}

// address skips an address: a number, $, /re/, \cREc, first~step, with
// the I and M flags of a regex.
func (sc *sedScanner) address() bool {
	switch c := sc.peek(); {
	case c >= '0' && c <= '9':
		for c := sc.peek(); (c >= '0' && c <= '9') || c == '~'; c = sc.peek() {
			sc.i++
		}
	case c == '$':
		sc.i++
	case c == '/' || c == '\\':
		sc.i++
		d := byte('/')
		if c == '\\' {
			if sc.i >= len(sc.s) {
				return false
			}
			d = sc.s[sc.i]
			sc.i++
		}
		if !sc.delimited(d) {
			return false
		}
		for c := sc.peek(); c == 'I' || c == 'M'; c = sc.peek() {
			sc.i++
		}
	}
	return true
}

// command reads one command; the escalation is empty for a harmless one,
// and ok is false for a script it cannot read.
func (sc *sedScanner) command() (escalation, bool) {
	sc.blanks()
	if sc.i >= len(sc.s) {
		return escalation{}, true
	}
	if !sc.address() {
		return escalation{}, false
	}
	if sc.peek() == ',' {
		sc.i++
		if c := sc.peek(); c == '+' || c == '~' {
			sc.i++
		}
		if !sc.address() {
			return escalation{}, false
		}
	}
	for sc.peek() == ' ' || sc.peek() == '!' {
		sc.i++
	}
	if sc.i >= len(sc.s) {
		return escalation{}, false
	}
	c := sc.s[sc.i]
	sc.i++
	switch c {
	case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
	case 'l', 'L', 'q', 'Q':
		for c := sc.peek(); c >= '0' && c <= '9' || c == ' '; c = sc.peek() {
			sc.i++
		}
	case '#', 'a', 'i', 'c':
		sc.toEOL()
	case ':', 'b', 't', 'T', 'v':
		for sc.i < len(sc.s) && sc.s[sc.i] != ';' && sc.s[sc.i] != '\n' && sc.s[sc.i] != '}' {
			sc.i++
		}
	case 'r', 'R':
		return escalation{opt: "sed " + string(c), eff: effectReads, value: sc.toEOL()}, true
	case 'w', 'W':
		return escalation{opt: "sed " + string(c), eff: effectWrites, value: sc.toEOL()}, true
	case 'e':
		return escalation{opt: "sed e", eff: effectRuns}, true
	case 's', 'y':
		return sc.substitute(c)
	default:
		return escalation{}, false
	}
	return escalation{}, true
}

// substitute reads s/re/repl/flags and y/src/dst/.
func (sc *sedScanner) substitute(cmd byte) (escalation, bool) {
	if sc.i >= len(sc.s) {
		return escalation{}, false
	}
	d := sc.s[sc.i]
	sc.i++
	if d == '\\' || d == '\n' || !sc.delimited(d) || !sc.delimited(d) {
		return escalation{}, false
	}
	if cmd == 'y' {
		return escalation{}, true
	}
	for sc.i < len(sc.s) {
		switch c := sc.s[sc.i]; {
		case c == 'e':
			return escalation{opt: "sed s///e", eff: effectRuns}, true
		case c == 'w':
			sc.i++
			return escalation{opt: "sed s///w", eff: effectWrites, value: sc.toEOL()}, true
		case c == 'g' || c == 'p' || c == 'i' || c == 'I' || c == 'm' || c == 'M' || (c >= '0' && c <= '9'):
			sc.i++
		default:
			return escalation{}, true
		}
	}
	return escalation{}, true
}
