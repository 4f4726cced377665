// Package shellparse reads a bash command line without running it, for the
// permission policy (which commands, files and variables does it touch?)
// and the bash tool's blocklist and preflight.
//
// [Parse] splits a script into its simple commands, through lists, pipes,
// subshells, blocks, functions, command and process substitutions, the
// scripts given to `sh -c`, eval and trap, and the commands find runs with
// -exec. Each [Command] carries its words as far as they are known
// statically, its assignments and redirections; [Command.Variants] peels
// wrappers (sudo, env, timeout, xargs, …: one list, in this package) so that
// a rule about rm also sees `sudo /bin/rm`. What the text alone cannot tell
// makes the script [Script.Dynamic]: arithmetic and indirect expansions that
// can run code hidden in a variable's value, program names computed at run
// time, scripts eval'd from variables. A policy must not allow a dynamic
// script by a command-prefix rule.
//
// The analysis sees at least what bash will run (SPEC PERM-6). Where bash
// and the parser could read the same text differently, Parse refuses it
// with a [*RefusedError] (errors.Is [ErrRefused]) instead of guessing:
// control characters (bash reads a carriage return as part of a word, the
// parser as a blank, so `echo hi\r# ; rm x` hid rm in a comment), text
// that is not UTF-8, a comment ending in a backslash (bash ends the comment
// at the line break, the parser joins the next line to it). The analysis is
// bounded: [MaxSize], [MaxNesting], a bounded parser stack, [MaxWork] with
// the nested scripts, and time linear in that; [ParseContext] stops when
// its context ends. A refused or unparsable command must never be taken
// as understood; [Rough] gives deny rules an over-reading of it.
package shellparse

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Assign is a NAME=value assignment.
type Assign struct {
	Name string
	// Value is the assigned word; an array assignment is not static.
	Value Word
}

// Redirect is a redirection to or from a file. Here-documents and file
// descriptor duplications (2>&1) are not listed.
type Redirect struct {
	Target Word
	// Write says the file is opened for writing (> >> >| &> &>> <> >&).
	Write bool
}

// Command is one simple command.
type Command struct {
	// Words are the command's words as written: Words[0] is the program,
	// which may be a wrapper (see [Command.Variants]).
	Words []Word
	// Assigns are the NAME=value words before the command.
	Assigns []Assign
	// Redirs are the redirections of the command's own statement.
	Redirs []Redirect
	// Stdin says the command's input comes from a pipe, a file or a
	// here-document.
	Stdin bool
	// Decl marks declare, export, local, readonly and typeset.
	Decl bool
	// Depth is 0 for a command of the script itself, n inside n levels of
	// `sh -c`, eval or trap strings.
	Depth int
	// Via names what runs the command when the shell does not: "find -exec"
	// or "find -delete" (given as `rm -rf PATH…`).
	Via string

	hdoc *hereDoc // the here-document feeding the command, if any
}

// hereDoc is a here-document and the text it was parsed from.
type hereDoc struct {
	r   *syntax.Redirect
	src string
}

// Script is what a parse of a command line tells.
type Script struct {
	// Commands are the simple commands, in source order, nested ones after
	// the command that runs them.
	Commands []Command
	// Redirs are the redirections of every statement.
	Redirs []Redirect
	// Assigns are every assignment: before commands, alone, or in
	// declare/export/local.
	Assigns []Assign
	// Dynamic says why the script cannot be judged from its text, "" when
	// it can.
	Dynamic string
	// ForkBomb says a function starts copies of itself in the background
	// or through a pipe (`:(){ :|:& };:`).
	ForkBomb bool
}

// maxDepth bounds how deep `sh -c`, eval and trap strings are parsed.
const maxDepth = 3

// Parse reads a bash script: [ParseContext] without a deadline.
func Parse(src string) (*Script, error) {
	return ParseContext(context.Background(), src)
}

// ParseContext reads a bash script. The error is for a script that does not
// parse, for one refused as unsafe to analyse (a [*RefusedError], which
// wraps [ErrRefused]), and for ctx ending (it wraps ctx.Err()); with any
// error, the script must not be taken as understood. A script inside it
// that does not parse, or that is refused for what it holds, makes it
// dynamic and is given as a rough split (see [Rough]).
//
// The analysis sees at least what bash will run (PERM-6): it refuses input
// that bash could read differently from its parser (control characters,
// text that is not UTF-8, a comment continued by a backslash), and it is
// bounded: [MaxSize] bytes, [MaxNesting] levels of brackets and a bounded
// parser stack, [MaxWork] bytes parsed in all with the nested scripts,
// [MaxCommands] commands. The time it takes is linear in the bytes parsed
// (the limits say how much at worst); ctx is looked at every KiB of input
// parsed and every few hundred nodes walked.
func ParseContext(ctx context.Context, src string) (*Script, error) {
	p, err := analyse(ctx, src)
	if err != nil {
		return nil, err
	}
	return p.s, nil
}

// analyse is ParseContext, returning the parser with its counts.
func analyse(ctx context.Context, src string) (*parser, error) {
	if err := ctx.Err(); err != nil {
		return nil, canceled(err)
	}
	if err := precheck(src); err != nil {
		return nil, err
	}
	p := &parser{ctx: ctx, s: &Script{}, work: len(src)}
	f, err := p.parse(src)
	if err != nil {
		return nil, err
	}
	if err := p.file(f, src, false, 0); err != nil {
		return nil, err
	}
	if p.err != nil {
		return nil, p.err
	}
	return p, nil
}

// parse runs the parser on src, stopping it when ctx ends or it recurses
// too deep.
func (p *parser) parse(src string) (*syntax.File, error) {
	r := &guardReader{ctx: p.ctx, src: src, next: guardEvery}
	if len(src) > guardEvery {
		r.base = stackFrames()
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(r, "")
	if r.err != nil {
		return nil, r.err
	}
	return f, err
}

type parser struct {
	ctx    context.Context
	s      *Script
	work   int   // bytes parsed so far
	copied int   // bytes copied into the texts of words
	ticks  int   // nodes walked so far
	err    error // why the analysis stopped: ctx ended, or a limit of the work
}

// tick counts a node walked and looks at the context now and then. It
// reports whether the analysis goes on.
func (p *parser) tick() bool {
	if p.err != nil {
		return false
	}
	p.ticks++
	if p.ticks%tickEvery == 0 {
		if err := p.ctx.Err(); err != nil {
			p.err = canceled(err)
			return false
		}
	}
	return true
}

// dynamic records the first reason the script is dynamic.
func (p *parser) dynamic(format string, args ...any) {
	if p.s.Dynamic == "" {
		p.s.Dynamic = fmt.Sprintf(format, args...)
	}
}

// file collects the commands of f, parsed from src. stdin says f's input
// is provided. The error is a refusal found on the way.
func (p *parser) file(f *syntax.File, src string, stdin bool, depth int) error {
	w := p.newWalker(src, stdin, depth)
	w.walk(f)
	if w.refused != nil {
		return w.refused
	}
	return nil
}

func readsInput(rs []*syntax.Redirect) bool {
	for _, r := range rs {
		switch r.Op {
		case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			if r.N == nil || r.N.Value == "0" {
				return true
			}
		}
	}
	return false
}

// redirects lists the file redirections.
func (p *parser) redirects(rs []*syntax.Redirect, src string) []Redirect {
	var out []Redirect
	for _, r := range rs {
		if r.Word == nil {
			continue
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			continue
		case syntax.DplIn, syntax.DplOut:
			if w := wordIn(r.Word, src); w.Static && (w.Value == "-" || isDigits(w.Value)) { // no copy: digits
				continue // duplicates a file descriptor
			}
		}
		var write bool
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll, syntax.RdrAllClob,
			syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut, syntax.DplOut:
			write = true
		}
		out = append(out, Redirect{Target: p.word(r.Word, src), Write: write})
	}
	return out
}

// heredoc returns the here-document feeding standard input, if any.
func heredoc(rs []*syntax.Redirect) *syntax.Redirect {
	for _, r := range rs {
		if (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc) && (r.N == nil || r.N.Value == "0") {
			return r
		}
	}
	return nil
}

func (p *parser) assign(a *syntax.Assign, src string) (Assign, bool) {
	if a.Name == nil {
		return Assign{}, false
	}
	v := Word{Static: true}
	if a.Value != nil {
		v = p.word(a.Value, src)
	} else if a.Array != nil {
		v.Static = false
	}
	out := Assign{Name: a.Name.Value, Value: v}
	p.s.Assigns = grow(p.s.Assigns, out)
	return out, true
}

func (p *parser) call(call *syntax.CallExpr, raw []*syntax.Redirect, redirs []Redirect, stdin bool, depth int, src string) {
	c := Command{Redirs: redirs, Stdin: stdin, Depth: depth}
	if r := heredoc(raw); r != nil {
		c.hdoc = &hereDoc{r: r, src: src}
	}
	for _, a := range call.Assigns {
		if as, ok := p.assign(a, src); ok {
			c.Assigns = append(c.Assigns, as)
		}
	}
	if len(call.Args) == 0 {
		return
	}
	args := call.Args
	for len(args) > 0 && assignShaped(args[0]) {
		// The parser leaves them as words after coproc; bash reads them
		// as assignments before the program (`coproc A=1 rm x` runs rm).
		w := p.word(args[0], src)
		name, _, _ := strings.Cut(w.Value, "=")
		v := Word{Text: w.Text[len(name)+1:], Value: w.Value[len(name)+1:], Static: w.Static}
		a := Assign{Name: strings.TrimSuffix(name, "+"), Value: v}
		p.s.Assigns = grow(p.s.Assigns, a)
		c.Assigns = append(c.Assigns, a)
		args = args[1:]
	}
	if len(args) == 0 {
		return
	}
	c.Words = make([]Word, 0, len(args))
	for _, w := range args {
		c.Words = append(c.Words, p.word(w, src))
	}
	p.add(c, 0)
}

// assignShaped reports a word bash reads as an assignment before a
// command: NAME= or NAME+= unquoted at its start.
func assignShaped(w *syntax.Word) bool {
	if len(w.Parts) == 0 {
		return false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	if !ok {
		return false
	}
	name, _, found := strings.Cut(l.Value, "=")
	return found && isName(strings.TrimSuffix(name, "+"))
}

// decl records declare/export/local/readonly/typeset as a command.
func (p *parser) decl(d *syntax.DeclClause, redirs []Redirect, stdin bool, depth int, src string) {
	c := Command{Words: []Word{Lit(d.Variant.Value)}, Redirs: redirs, Stdin: stdin, Depth: depth, Decl: true}
	for _, a := range d.Args {
		p.assign(a, src)
		c.Words = append(c.Words, p.declWord(a, src))
	}
	p.checkDecl(d.Variant.Value, c.Words[1:])
	p.emit(c)
}

// declWord renders one argument of export/declare/local as a word.
func (p *parser) declWord(a *syntax.Assign, src string) Word {
	switch {
	case a.Name == nil && a.Value != nil:
		return p.word(a.Value, src)
	case a.Name == nil:
		return Word{}
	case a.Naked:
		return Word{Text: a.Name.Value, Value: a.Name.Value, Static: a.Index == nil}
	}
	w := Word{Text: a.Name.Value + "=", Value: a.Name.Value + "=", Static: a.Index == nil && a.Array == nil}
	if a.Value != nil {
		v := p.word(a.Value, src)
		p.charge(len(w.Text) + len(v.Text) + len(w.Value) + len(v.Value))
		w.Text += v.Text
		w.Value += v.Value
		w.Static = w.Static && v.Static
	}
	return w
}

// add records a command and what it runs: nested scripts and find's
// -exec commands, through each layer of wrappers (see [Command.Layers]).
// finds counts the find commands c runs under.
func (p *parser) add(c Command, finds int) {
	p.emit(c)
	v := c.Words
	for range maxUnwrap {
		if len(v) == 0 || p.err != nil {
			return
		}
		if !v[0].Static {
			p.dynamic("the program name %q is computed at run time", v[0].Text)
			return
		}
		p.checkBuiltin(v)
		p.nested(c, v)
		if path.Base(v[0].Value) == "find" {
			if finds >= maxFindDepth {
				p.dynamic("find runs find more than %d deep", maxFindDepth)
			} else {
				for _, x := range findRuns(v) {
					p.add(Command{Words: x.words, Depth: c.Depth, Via: x.via}, finds+1)
				}
			}
		}
		v, _ = unwrap(v)
	}
}

// word evaluates a word of src, charging the bytes it copies.
func (p *parser) word(w *syntax.Word, src string) Word {
	word, n := wordCost(w, src)
	p.charge(n)
	return word
}

// charge counts n bytes copied into the texts of words. Each word copies
// the text of the expansions it holds, so nested expansions copy the same
// text once per level: past 8 bytes per byte parsed, the command is
// refused.
func (p *parser) charge(n int) {
	if p.copied += n; p.copied > 8*p.work+64<<10 && p.err == nil {
		p.err = refuse(RefusedWork, -1, "the command nests expansions in words so deep that analysing it "+
			"would copy %d bytes, more than rein allows; simplify it", p.copied)
	}
}

// emit records a command, up to MaxCommands.
func (p *parser) emit(c Command) {
	if len(p.s.Commands) >= MaxCommands {
		if p.err == nil {
			p.err = refuse(RefusedWork, -1, "the command runs more than %d simple commands, more than rein analyses; "+
				"split it", MaxCommands)
		}
		return
	}
	p.s.Commands = grow(p.s.Commands, c)
}

// grow appends x to s, doubling its capacity when full: a long script
// makes long lists, and append's slower growth would copy them over and
// over.
func grow[T any](s []T, x ...T) []T {
	if len(s)+len(x) > cap(s) {
		s = slices.Grow(s, max(len(s), len(x)))
	}
	return append(s, x...)
}

// nested parses the script a command runs through sh -c, eval, trap and
// the like. A script that cannot be analysed makes the whole one dynamic
// and is given as a rough split; one that would take the analysis over
// MaxWork stops it.
func (p *parser) nested(c Command, v []Word) {
	script, runs, known := innerScript(v, c.hdoc)
	if !runs {
		return
	}
	name := path.Base(v[0].Value)
	if !known {
		p.dynamic("%s runs a script that is not known before it runs", name)
		return
	}
	if c.Depth+1 > maxDepth {
		p.dynamic("scripts nested more than %d deep", maxDepth)
		return
	}
	if p.work += len(script); p.work > MaxWork {
		p.err = refuse(RefusedWork, -1, "the command and the scripts it runs (sh -c, eval, …) make more than %d bytes "+
			"to analyse, more than rein allows; split it", MaxWork)
		return
	}
	err := precheck(script)
	var f *syntax.File
	if err == nil {
		f, err = p.parse(script)
	}
	if err == nil {
		err = p.file(f, script, c.Stdin, c.Depth+1)
		if err == nil || p.err != nil {
			return
		}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		p.err = err
		return
	}
	if errors.Is(err, ErrRefused) {
		p.dynamic("the script %s runs cannot be analysed: %v", name, err)
	} else {
		p.dynamic("the script %s runs does not parse: %v", name, err)
	}
	for _, r := range Rough(script) {
		r.Depth = c.Depth + 1
		p.emit(r)
	}
}
