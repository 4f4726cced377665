package shellparse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"unicode/utf8"
)

// The limits of the analysis (PERM-6: bounded in size, depth and time).
// None of them bothers a real command: a model's whole answer is smaller
// than MaxSize, and real scripts nest a few levels deep. Past a limit,
// Parse refuses the command ([RefusedSize], [RefusedDepth],
// [RefusedWork]). Within them the analysis takes time and memory linear
// in the bytes parsed, and its stack stays within a few MB.
//
// Measured (BenchmarkParseWorst, one core of a shared 2-vCPU VM): the
// worst accepted inputs, 1 MiB of dense syntax (MaxCommands commands,
// 500k words, redirections or arithmetic operators, or a 1 MiB script
// run by `bash -c`), take 80–165 ms of CPU (0.08–0.4 s wall under load)
// and allocate 80–165 MB; a typical compound command takes about 10 µs
// (BenchmarkParse).
const (
	// MaxSize is the longest command line [Parse] reads, in bytes: 1 MiB,
	// room for a file written through a here-document.
	MaxSize = 1 << 20
	// MaxNesting bounds how deep brackets ( { [ nest, counted by a scan of
	// the text before it is parsed. The scan does not know quotes, so a
	// bracket in a string counts too: conservative, and far above what a
	// script needs.
	MaxNesting = 256
	// MaxWork bounds the bytes parsed in all: the command line and every
	// script it runs through `sh -c`, eval, trap and the like.
	MaxWork = 2 * MaxSize
	// MaxCommands bounds the simple commands of a script, nested ones
	// included: what the analysis builds stays small beside the input.
	MaxCommands = 50_000
)

const (
	// maxParseFrames bounds how deep the parser may recurse, in Go stack
	// frames above where it started, for constructs the bracket scan does
	// not count (`if if if …`, `$((!!!…1))`, `[[ ! ! … ]]`): about 100
	// levels of parenthesised arithmetic, 350 of command substitutions,
	// 700 of if. Looked at every guardEvery bytes, and the parser goes at
	// most 2 frames deeper per byte, so the stack stays under 12k frames,
	// a few MB.
	maxParseFrames = 4096
	// maxWalkDepth bounds the depth of the syntax tree the analysis walks.
	// Chains of pipes, && and arithmetic operators are walked flat, so only
	// real nesting counts.
	maxWalkDepth = 2048
	// maxFindDepth bounds `find -exec find -exec …`.
	maxFindDepth = 4
	// tickEvery is how many nodes the walk visits between two looks at
	// the context.
	tickEvery = 256
	// guardEvery is how many bytes the parser reads between two looks at
	// its stack.
	guardEvery = 4 << 10
)

// ErrRefused is wrapped by the error of a command refused as unsafe to
// analyse (see [RefusedError]): test it with errors.Is. A caller must not
// treat such a command as understood: it asks, or denies where nobody can
// be asked. [Rough] still gives deny rules something to look at.
var ErrRefused = errors.New("refused as unsafe to analyse")

// Refusal says why a command was refused.
type Refusal int

// The reasons for a refusal.
const (
	// RefusedChar: a control character (CR, NUL, VT, FF, ESC, DEL, other C0
	// and C1 controls) or a bidirectional-text control that bash, rein's
	// parser or a person reading the command may each read differently.
	RefusedChar Refusal = iota + 1
	// RefusedEncoding: bytes that are not UTF-8.
	RefusedEncoding
	// RefusedComment: a comment ends in a backslash; bash ends the comment
	// at the line break, rein's parser joins the next line to it.
	RefusedComment
	// RefusedSize: longer than [MaxSize].
	RefusedSize
	// RefusedDepth: nested deeper than [MaxNesting] or than the parser's
	// stack allows.
	RefusedDepth
	// RefusedWork: the nested scripts make more than [MaxWork] to parse,
	// or the script more than [MaxCommands] commands.
	RefusedWork
)

// RefusedError is the error of [Parse] for a command it refuses to analyse
// because its reading could differ from bash's, or because analysing it
// would cost more than the limits allow. It wraps [ErrRefused]. Its message
// says what is wrong and how to fix it, for the model to read.
type RefusedError struct {
	Kind Refusal
	// Offset is the byte offset of the offending character, -1 when the
	// refusal is about the whole command.
	Offset int
	// Reason is the message: what is wrong and how to fix it.
	Reason string
}

func (e *RefusedError) Error() string { return e.Reason }

// Unwrap returns [ErrRefused].
func (e *RefusedError) Unwrap() error { return ErrRefused }

func refuse(kind Refusal, off int, format string, args ...any) *RefusedError {
	return &RefusedError{Kind: kind, Offset: off, Reason: fmt.Sprintf(format, args...)}
}

// precheck refuses, in one pass over the bytes, what must not reach the
// parser: too long, not UTF-8, control characters, brackets nested too deep.
func precheck(src string) error {
	if len(src) > MaxSize {
		return refuse(RefusedSize, -1, "the command is %d bytes long, more than rein analyses (%d); "+
			"write long content to a file first or split the command", len(src), MaxSize)
	}
	depth := 0
	for i := 0; i < len(src); {
		c := src[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '(' || c == '{' || c == '[':
				if depth++; depth > MaxNesting {
					return refuse(RefusedDepth, i, "the command nests brackets more than %d deep (at byte %d), "+
						"more than rein analyses; simplify it", MaxNesting, i+1)
				}
			case c == ')' || c == '}' || c == ']':
				depth = max(depth-1, 0)
			case c < 0x20 && c != '\t' && c != '\n' || c == 0x7f:
				return badChar(i, rune(c))
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(src[i:])
		if r == utf8.RuneError && n <= 1 {
			return refuse(RefusedEncoding, i, "the command is not valid UTF-8 (byte 0x%02x at byte %d); "+
				"write it as UTF-8 text", c, i+1)
		}
		if r >= 0x80 && r <= 0x9f || bidi(r) {
			return badChar(i, r)
		}
		i += n
	}
	return nil
}

// bidi reports the Unicode controls that reorder how text is shown
// (embeddings, overrides, isolates): a command holding one can read
// differently on screen from what bash runs.
func bidi(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// badChar is the refusal of a control character at offset i.
func badChar(i int, r rune) error {
	var name, fix string
	switch r {
	case 0:
		name, fix = "a NUL byte", "remove it"
	case '\r':
		name, fix = "a carriage return", "remove it (end lines with \\n alone, not \\r\\n)"
	case '\v':
		name, fix = "a vertical tab", "remove it or write it as $'\\v'"
	case '\f':
		name, fix = "a form feed", "remove it or write it as $'\\f'"
	case 0x1b:
		name, fix = "an escape character", "remove it or write it as $'\\e'"
	case 0x7f:
		name, fix = "a DEL character", "remove it or write it as $'\\x7f'"
	default:
		switch {
		case bidi(r):
			name, fix = fmt.Sprintf("the bidirectional-text control U+%04X", r), "remove it"
		case r < 0x20:
			name, fix = fmt.Sprintf("the control character U+%04X", r), fmt.Sprintf("remove it or write it as $'\\x%02x'", r)
		default:
			name, fix = fmt.Sprintf("the control character U+%04X", r), "remove it"
		}
	}
	return refuse(RefusedChar, i, "the command holds %s (at byte %d), which bash and rein's analysis "+
		"may read differently; %s", name, i+1, fix)
}

// guardReader feeds the parser its input and stops it when the context
// ends or the parser recurses too deep. It looks at the context at every
// read (the parser reads 1 KiB at a time) and at the stack every
// guardEvery bytes: the parser goes at most a few frames deeper per byte
// outside brackets (which precheck bounds), so the stack stays within a
// few MB. An input shorter than guardEvery is never looked at: it cannot
// go deep enough to matter.
type guardReader struct {
	ctx  context.Context
	src  string
	off  int
	next int       // the offset where the stack is looked at next
	base int       // frames on the stack when the parse started
	pcs  []uintptr // for runtime.Callers, allocated when first needed
	err  error     // why the guard stopped the parser
}

func (r *guardReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.off >= len(r.src) {
		return 0, io.EOF
	}
	if err := r.ctx.Err(); err != nil {
		r.err = canceled(err)
		return 0, r.err
	}
	if r.off >= r.next {
		r.next = r.off + guardEvery
		if r.pcs == nil {
			r.pcs = make([]uintptr, r.base+maxParseFrames+1)
		}
		if runtime.Callers(0, r.pcs) > r.base+maxParseFrames {
			r.err = refuse(RefusedDepth, r.off, "the command nests too deep for rein's analysis (around byte %d); "+
				"simplify it", r.off)
			return 0, r.err
		}
	}
	n := copy(p, r.src[r.off:])
	r.off += n
	return n, nil
}

// stackFrames counts the frames on the caller's stack.
func stackFrames() int {
	for n := 256; ; n *= 4 {
		if got := runtime.Callers(0, make([]uintptr, n)); got < n {
			return got
		}
	}
}

// canceled wraps the error of an ended context.
func canceled(err error) error {
	return fmt.Errorf("shellparse: analysis stopped: %w", err)
}
