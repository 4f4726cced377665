package shellparse

import (
	"path"
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// checkNode marks the constructs that can run code hidden in a variable's
// value: bash evaluates a name it meets in arithmetic as an expression, so
// `x='a[$(cmd)]'; ((x))` runs cmd, and so do `$((x))`, `let x`, `for
// ((…))`, `[[ x -eq 1 ]]`, `${a[x]}`, `${s:x}`, `${!x}` and `${x@P}`.
// Arithmetic made only of numbers is harmless.
func (p *parser) checkNode(n syntax.Node) {
	switch n := n.(type) {
	case *syntax.ArithmCmd:
		if !literalArithm(n.X) {
			p.dynamic("the arithmetic command ((…)) can run code hidden in a variable")
		}
	case *syntax.ArithmExp:
		if !literalArithm(n.X) {
			p.dynamic("the arithmetic expansion $((…)) can run code hidden in a variable")
		}
	case *syntax.LetClause:
		p.dynamic("let can run code hidden in a variable")
	case *syntax.CStyleLoop:
		for _, x := range []syntax.ArithmExpr{n.Init, n.Cond, n.Post} {
			if x != nil && !literalArithm(x) {
				p.dynamic("the loop for ((…)) can run code hidden in a variable")
			}
		}
	case *syntax.BinaryTest:
		if n.Op >= syntax.TsEql && n.Op <= syntax.TsGtr && !(numberTest(n.X) && numberTest(n.Y)) {
			p.dynamic("the arithmetic test [[ … %s … ]] can run code hidden in a variable", n.Op)
		}
	case *syntax.UnaryTest:
		if n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar {
			if w, ok := n.X.(*syntax.Word); !ok || !isName(w.Lit()) {
				p.dynamic("the test [[ %s … ]] evaluates a subscript", n.Op)
			}
		}
	case *syntax.ParamExp:
		p.checkParam(n)
	case *syntax.Assign:
		if n.Index != nil && !literalArithm(n.Index) {
			p.dynamic("the array subscript of %s is evaluated as arithmetic", nameOf(n.Name))
		}
	case *syntax.ArrayElem:
		if n.Index != nil && !literalArithm(n.Index) {
			p.dynamic("an array subscript is evaluated as arithmetic")
		}
	}
}

func nameOf(l *syntax.Lit) string {
	if l == nil {
		return "a variable"
	}
	return l.Value
}

// checkParam marks indirect expansion, computed subscripts and offsets, and
// the @ operators (${x@P} expands a prompt, command substitutions included).
func (p *parser) checkParam(n *syntax.ParamExp) {
	star := false
	if w, ok := n.Index.(*syntax.Word); ok {
		star = w.Lit() == "@" || w.Lit() == "*"
	}
	switch {
	case n.Excl && n.Names == 0 && !star:
		p.dynamic("the indirect expansion ${!%s} reads a variable named at run time", nameOf(n.Param))
	case n.Index != nil && !star && !literalArithm(n.Index):
		p.dynamic("the subscript of ${%s[…]} is evaluated as arithmetic", nameOf(n.Param))
	case n.Slice != nil && (n.Slice.Offset != nil && !literalArithm(n.Slice.Offset) || n.Slice.Length != nil && !literalArithm(n.Slice.Length)):
		p.dynamic("the offset of ${%s:…} is evaluated as arithmetic", nameOf(n.Param))
	case n.Exp != nil && n.Exp.Op == syntax.OtherParamOps:
		p.dynamic("the expansion ${%s@…} can run code", nameOf(n.Param))
	case n.NestedParam != nil:
		p.dynamic("a nested parameter expansion")
	}
}

var number = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(0[xX][0-9a-fA-F]+|[0-9]+)$`) })

// literalArithm reports arithmetic made only of numbers and operators. It
// goes down chains of operators (`1+2+3…`, nested to the left) in a loop.
func literalArithm(x syntax.ArithmExpr) bool {
	for {
		switch y := x.(type) {
		case nil:
			return true
		case *syntax.Word:
			return number().MatchString(y.Lit())
		case *syntax.BinaryArithm:
			if !literalArithm(y.Y) {
				return false
			}
			x = y.X
		case *syntax.UnaryArithm:
			if y.Op == syntax.Inc || y.Op == syntax.Dec {
				return false
			}
			x = y.X
		case *syntax.ParenArithm:
			x = y.X
		default:
			return false
		}
	}
}

// numberTest reports a [[ ]] operand that is a plain number.
func numberTest(x syntax.TestExpr) bool {
	w, ok := x.(*syntax.Word)
	return ok && number().MatchString(w.Lit())
}

// nameArgs are builtins that take variable names, where a subscript is
// evaluated as arithmetic: whether their operands are names, the options
// whose value is a name, and the options that take another value.
var nameArgs = map[string]struct {
	operands      bool
	names, valued string
}{
	"unset":     {operands: true},
	"read":      {operands: true, names: "-a", valued: "-p -d -t -n -N -u -i"},
	"mapfile":   {operands: true, valued: "-d -n -O -s -u -c"},
	"readarray": {operands: true, valued: "-d -n -O -s -u -c"},
	"wait":      {names: "-p"},
	"printf":    {names: "-v"},
	"test":      {names: "-v -R"},
	"[":         {names: "-v -R"},
}

// evalOpts are the options that make a builtin run or load code given as a
// string: hash -p, enable -f, complete -C, bind -x, mapfile -C.
var evalOpts = map[string]byte{"hash": 'p', "enable": 'f', "complete": 'C', "compgen": 'C', "bind": 'x', "mapfile": 'C', "readarray": 'C'}

// checkBuiltin marks builtins that evaluate strings: names with subscripts
// (unset 'a[$(cmd)]'), the options of evalOpts, aliases and name
// references.
func (p *parser) checkBuiltin(v []Word) {
	name := path.Base(v[0].Value)
	args := v[1:]
	switch name {
	case "alias":
		for _, a := range args {
			if strings.Contains(a.Value, "=") || !a.Static {
				p.dynamic("alias defines a command by a string")
			}
		}
		return
	case "declare", "typeset", "local", "export", "readonly", "nameref":
		p.checkDecl(name, args)
		return
	}
	if opt, ok := evalOpts[name]; ok {
		for _, a := range args {
			if shortOpt(a.Value, opt) {
				p.dynamic("%s -%c runs or loads code given as a string", name, opt)
				return
			}
		}
	}
	spec, ok := nameArgs[name]
	if !ok {
		return
	}
	names, valued := strings.Fields(spec.names), strings.Fields(spec.valued)
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a.Static && has(valued, a.Value):
			i++
		case a.Static && has(names, a.Value):
			if i+1 < len(args) && badName(args[i+1]) {
				p.dynamic("%s %s takes a name whose subscript is evaluated as arithmetic", name, a.Value)
			}
			i++
		case a.Static && strings.HasPrefix(a.Value, "-"):
		case spec.operands && badName(a):
			p.dynamic("%s takes a name whose subscript is evaluated as arithmetic", name)
		}
	}
}

// badName reports a name argument that is computed or has a subscript.
func badName(w Word) bool { return !w.Static || strings.Contains(w.Value, "[") }

// shortOpt reports whether a is a cluster of short options holding f.
func shortOpt(a string, f byte) bool {
	return len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], f) >= 0
}

// checkDecl marks declare -n (name references), declare -i (integer
// variables, whose assignments are arithmetic) and names with subscripts.
func (p *parser) checkDecl(variant string, args []Word) {
	if variant == "nameref" {
		p.dynamic("a name reference resolves a variable named at run time")
		return
	}
	typed := variant == "declare" || variant == "typeset" || variant == "local"
	for _, a := range args {
		v := a.Value
		switch {
		case typed && (shortOpt(v, 'n') || shortOpt(v, 'i')):
			p.dynamic("%s %s makes later assignments evaluate code", variant, v)
		case !a.Static && !strings.HasPrefix(a.Text, "-"):
			name, _, _ := strings.Cut(a.Text, "=")
			if !isName(name) {
				p.dynamic("%s takes a name computed at run time", variant)
			}
		case strings.Contains(strings.SplitN(v, "=", 2)[0], "["):
			p.dynamic("%s takes a name whose subscript is evaluated as arithmetic", variant)
		}
	}
}
