package shellparse

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// walker visits a parsed script once, in source order, keeping what the
// path from the root tells: whether the input is provided (a pipe or an
// input redirection above), whether a statement runs in the background or
// in a pipe (for fork bombs), and which functions are being defined.
//
// Chains of pipes and && (and of arithmetic operators) are parsed into
// trees as deep as the chain is long; the walker goes through them flat,
// so its stack grows only with real nesting, which the parser's limits
// bound. Every node costs O(1) beyond the words of its commands.
type walker struct {
	p     *parser
	src   string // the text parsed, for the texts of words
	depth int    // levels of sh -c, eval and trap around the script
	// fed says the current statement's input is provided.
	fed bool
	// spawn counts the backgrounded statements and pipe sides on the path.
	spawn int
	// fns holds, for each function being defined, the spawn count where
	// its definition starts (outermost first).
	fns   map[string][]int
	stack []frame
	// refused is why the script cannot be analysed, found on the way.
	refused *RefusedError
}

// frame is what a node changed on the way down, restored on the way up.
type frame struct {
	fed   bool
	spawn int
	fn    string // the function whose definition the node starts
}

func (p *parser) newWalker(src string, stdin bool, depth int) *walker {
	return &walker{p: p, src: src, depth: depth, fed: stdin}
}

// walk visits n and everything under it.
func (w *walker) walk(n syntax.Node) {
	if n != nil && w.ok() {
		syntax.Walk(n, w.visit)
	}
}

// ok reports whether the walk goes on.
func (w *walker) ok() bool { return w.refused == nil && w.p.err == nil }

func (w *walker) visit(n syntax.Node) bool {
	if n == nil {
		w.pop()
		return true
	}
	if !w.ok() || !w.p.tick() {
		return false
	}
	if len(w.stack) >= maxWalkDepth {
		w.refused = refuse(RefusedDepth, -1, "the command nests more than %d levels deep, more than rein analyses; simplify it", maxWalkDepth)
		return false
	}
	w.p.checkNode(n)
	f := frame{fed: w.fed, spawn: w.spawn}
	switch n := n.(type) {
	case *syntax.Comment:
		if strings.Contains(n.Text, "\n") {
			off := int(n.Hash.Offset())
			w.refused = refuse(RefusedComment, off, "a comment ends with a backslash (the comment at byte %d): bash ends "+
				"the comment at the line break and runs the next line, which rein's analysis reads as part of the "+
				"comment; remove the backslash", off+1)
			return false
		}
	case *syntax.BinaryCmd:
		w.chain(n)
		return false
	case *syntax.BinaryArithm:
		w.arithm(n)
		return false
	case *syntax.FuncDecl:
		if n.Name != nil {
			f.fn = n.Name.Value
			if w.fns == nil {
				w.fns = map[string][]int{}
			}
			w.fns[f.fn] = append(w.fns[f.fn], w.spawn)
		}
	case *syntax.CallExpr:
		if len(n.Args) > 0 {
			if s := w.fns[n.Args[0].Lit()]; len(s) > 0 && w.spawn > s[0] {
				w.p.s.ForkBomb = true
			}
		}
	case *syntax.WordIter:
		w.loopVar(n)
	case *syntax.Stmt:
		if n.Background {
			w.spawn++
		}
		if readsInput(n.Redirs) {
			w.fed = true
		}
		w.stmt(n)
	}
	w.stack = append(w.stack, f)
	return true
}

// loopVar records `for NAME in WORDS` as an assignment of each word to
// NAME (`for NAME` alone takes the positional parameters, not known), so a
// policy can follow `for f in a b; do cat $f; done`.
func (w *walker) loopVar(it *syntax.WordIter) {
	if it.Name == nil {
		return
	}
	p := w.p
	if !it.InPos.IsValid() {
		p.s.Assigns = grow(p.s.Assigns, Assign{Name: it.Name.Value})
		return
	}
	for _, item := range it.Items {
		p.s.Assigns = grow(p.s.Assigns, Assign{Name: it.Name.Value, Value: p.word(item, w.src)})
	}
}

// pop restores what the node being left changed.
func (w *walker) pop() {
	f := w.stack[len(w.stack)-1]
	w.stack = w.stack[:len(w.stack)-1]
	w.fed, w.spawn = f.fed, f.spawn
	if f.fn != "" {
		s := w.fns[f.fn]
		w.fns[f.fn] = s[:len(s)-1]
	}
}

// stmt records a statement's redirections and its command.
func (w *walker) stmt(st *syntax.Stmt) {
	p := w.p
	redirs := p.redirects(st.Redirs, w.src)
	p.s.Redirs = grow(p.s.Redirs, redirs...)
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		p.call(c, st.Redirs, redirs, w.fed, w.depth, w.src)
	case *syntax.DeclClause:
		p.decl(c, redirs, w.fed, w.depth, w.src)
	}
}

// chain walks a list or pipeline `a | b && c …` flat: the parser nests it
// to the left, one level per operator.
func (w *walker) chain(top *syntax.BinaryCmd) {
	spine := []*syntax.BinaryCmd{top}
	for {
		x, ok := spine[len(spine)-1].X.Cmd.(*syntax.BinaryCmd)
		if !ok {
			break
		}
		spine = append(spine, x)
	}
	// inPipe[i]: spine[i] is on the left side of a pipe further out;
	// inFed[i]: inside a statement of the chain that reads a file.
	inPipe := make([]bool, len(spine)+1)
	inFed := make([]bool, len(spine)+1)
	for i, b := range spine {
		inPipe[i+1] = inPipe[i] || isPipe(b)
		inFed[i+1] = inFed[i] || i+1 < len(spine) && readsInput(b.X.Redirs)
	}
	fed, spawn := w.fed, w.spawn
	for _, b := range spine[:len(spine)-1] {
		w.shallow(b.X) // the statement holding the next operator
	}
	last := len(spine)
	w.side(spine[last-1].X, fed || inFed[last], spawn, inPipe[last])
	for i := last - 1; i >= 0; i-- {
		b := spine[i]
		w.side(b.Y, fed || inFed[i] || isPipe(b), spawn, inPipe[i] || isPipe(b))
	}
	w.fed, w.spawn = fed, spawn
}

// side walks one operand of a chain.
func (w *walker) side(st *syntax.Stmt, fed bool, spawn int, piped bool) {
	w.fed, w.spawn = fed, spawn
	if piped {
		w.spawn++
	}
	w.walk(st)
}

// shallow visits a statement of a chain without its command, which the
// chain walks itself.
func (w *walker) shallow(st *syntax.Stmt) {
	if !w.ok() || !w.p.tick() {
		return
	}
	for i := range st.Comments {
		w.walk(&st.Comments[i])
	}
	for _, r := range st.Redirs {
		w.walk(r)
	}
	redirs := w.p.redirects(st.Redirs, w.src)
	w.p.s.Redirs = grow(w.p.s.Redirs, redirs...)
}

func isPipe(b *syntax.BinaryCmd) bool { return b.Op == syntax.Pipe || b.Op == syntax.PipeAll }

// arithm walks a chain of arithmetic operators `1+2+3…` flat.
func (w *walker) arithm(top *syntax.BinaryArithm) {
	spine := []*syntax.BinaryArithm{top}
	for {
		x, ok := spine[len(spine)-1].X.(*syntax.BinaryArithm)
		if !ok {
			break
		}
		if !w.p.tick() {
			return
		}
		spine = append(spine, x)
	}
	w.walk(spine[len(spine)-1].X)
	for i := len(spine) - 1; i >= 0; i-- {
		w.walk(spine[i].Y)
	}
}
