package builtin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
)

// grepGo is the pure Go engine: a gitignore-aware walk and a line-by-line
// scan of each file, never holding a whole file in memory.
func grepGo(ctx context.Context, q grepQuery) (grepResult, error) {
	s := &goSearch{q: q}
	if q.isFile {
		err := s.file(q.base)
		if errors.Is(err, errStopWalk) {
			err = nil
		}
		return s.res, err
	}
	err := walkFiles(ctx, q.base, -1, q.exclude, func(abs, rel string, d fs.DirEntry) error {
		if !globMatch(q.glob, rel) {
			return nil
		}
		return s.file(abs)
	})
	return s.res, err
}

// globMatch applies grep's glob filter the way rg's --glob does: a glob
// without a slash matches the file name, one with a slash the path from the
// search directory.
func globMatch(glob, rel string) bool {
	if glob == "" {
		return true
	}
	glob = strings.TrimPrefix(glob, "/")
	if !strings.Contains(glob, "/") {
		rel = rel[strings.LastIndexByte(rel, '/')+1:]
	}
	ok, _ := doublestar.Match(glob, rel)
	return ok
}

type goSearch struct {
	q       grepQuery
	res     grepResult
	matches int
}

// file searches one file; it returns errStopWalk once the content limit is
// passed.
func (s *goSearch) file(abs string) error {
	f, err := openRegular(abs)
	if err != nil {
		return nil // unreadable files, FIFOs and devices are skipped, as rg does
	}
	defer f.Close()
	if s.q.fence.Root != "" && !s.q.fence.opened(f) {
		return nil // a link swapped in after the walk looked: skipped
	}
	r := bufio.NewReaderSize(f, 64<<10)
	if head, _ := r.Peek(64 << 10); bytes.IndexByte(head, 0) >= 0 { // rg looks at its first 64 KB buffer
		return nil
	}
	gf := grepFile{Path: abs}
	var before []grepLine // context lines not yet shown
	after, lastShown := 0, 0
	var buf []byte
	stop := false
	for n := 1; !stop; n++ {
		line, err := readLine(r, &buf)
		if err != nil && len(line) == 0 {
			break
		}
		if bytes.IndexByte(line, 0) >= 0 {
			break // binary from here on: stop, as rg does
		}
		match := s.q.re.Match(line)
		switch {
		case match:
			gf.Count++
			if s.q.mode == modeFiles {
				stop = true
			}
			if s.q.mode != modeContent {
				continue
			}
			for _, l := range before {
				if l.N > lastShown {
					gf.Lines = append(gf.Lines, l)
				}
			}
			before = before[:0]
			gf.Lines = append(gf.Lines, grepLine{N: n, Text: lineText(line), Match: true})
			lastShown, after = n, s.q.context
			s.matches++
			if s.matches > s.q.limit {
				s.res.More, stop = true, true
			}
		case after > 0:
			gf.Lines = append(gf.Lines, grepLine{N: n, Text: lineText(line)})
			lastShown = n
			after--
		case s.q.context > 0:
			if len(before) == s.q.context {
				before = append(before[:0], before[1:]...)
			}
			before = append(before, grepLine{N: n, Text: lineText(line)})
		}
		if err != nil {
			break
		}
	}
	if gf.Count > 0 {
		s.res.Files = append(s.res.Files, gf)
	}
	if s.res.More {
		return errStopWalk
	}
	return nil
}

// grepMaxLine is the longest line the Go engine holds: a file with a
// longer one (a workspace file of gigabytes without a newline) is searched
// up to it, like a binary file, rather than held in the server's memory.
const grepMaxLine = 8 << 20

// errLineTooLong stops the search of a file at a line beyond grepMaxLine.
var errLineTooLong = errors.New("line longer than grep holds")

// readLine returns the next line of r without its newline, reusing buf for
// lines longer than r's buffer. err is io.EOF after the last line.
func readLine(r *bufio.Reader, buf *[]byte) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		*buf = append((*buf)[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(*buf) > grepMaxLine {
				return nil, errLineTooLong
			}
			line, err = r.ReadSlice('\n')
			*buf = append(*buf, line...)
		}
		line = *buf
	}
	return bytes.TrimSuffix(line, []byte("\n")), err
}

// lineText is a line as shown: without a trailing carriage return.
func lineText(line []byte) string {
	return string(bytes.TrimSuffix(line, []byte("\r")))
}

// rgArgs returns the flags that make rg search like grepGo.
func rgArgs(q grepQuery) []string {
	args := []string{"--no-config", "--hidden", "--no-require-git", "--no-ignore-global",
		"--sort", "path", "--no-messages", "--with-filename"}
	if q.caseInsensitive {
		args = append(args, "--ignore-case")
	} else {
		args = append(args, "--case-sensitive")
	}
	if q.mode == modeContent {
		args = append(args, "--json")
		if q.context > 0 {
			args = append(args, "--context", strconv.Itoa(q.context))
		}
	} else {
		args = append(args, "--count", "--null")
	}
	// A --glob would override ignore files; a file type filters without
	// doing so, but matches names only: globs with a slash are applied to
	// rg's output instead (rgKeep).
	if g := strings.TrimPrefix(q.glob, "/"); g != "" && !q.isFile && !strings.Contains(g, "/") {
		args = append(args, "--type-add", "reinglob:"+g, "--type", "reinglob")
	}
	args = append(args, "--glob", "!.git")
	for _, g := range q.exclude.rgGlobs {
		args = append(args, "--glob", g)
	}
	return append(args, "--regexp", q.pattern)
}

// grepRG runs ripgrep. It searches from the base directory, so globs are
// relative to it, and reads rg's output as it comes, stopping rg once the
// content limit is passed. err is for rg failing to run at all.
func grepRG(ctx context.Context, rg string, q grepQuery) (grepResult, error) {
	dir, target := q.base, "."
	if q.isFile {
		dir, target = filepath.Dir(q.base), filepath.Base(q.base)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := osexec.CommandContext(ctx, rg, append(rgArgs(q), "--", target)...)
	cmd.Dir = dir
	cmd.WaitDelay = 2 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return grepResult{}, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return grepResult{}, err
	}
	keep := func(p string) bool {
		g, rel := strings.TrimPrefix(q.glob, "/"), strings.TrimPrefix(filepath.ToSlash(p), "./")
		if !q.isFile && q.exclude.skipsRel(dir, rel) {
			return false
		}
		return q.isFile || !strings.Contains(g, "/") || globMatch(g, rel)
	}
	var res grepResult
	var perr error
	if q.mode == modeContent {
		res, perr = readRGJSON(stdout, dir, q.limit, keep)
	} else {
		res, perr = readRGCount(stdout, dir, keep)
	}
	cancel() // stop rg if we stopped reading early
	io.Copy(io.Discard, stdout)
	werr := cmd.Wait()
	if perr != nil {
		return grepResult{}, perr
	}
	var exit *osexec.ExitError
	if werr != nil && !res.More && (!errors.As(werr, &exit) || exit.ExitCode() > 1) && len(res.Files) == 0 {
		return grepResult{}, fmt.Errorf("rg: %v: %s", werr, strings.TrimSpace(stderr.String()))
	}
	return res, nil
}

// rgText is rg's JSON form of a path or line: text, or base64 bytes when it
// is not UTF-8.
type rgText struct {
	Text  *string `json:"text"`
	Bytes string  `json:"bytes"`
}

func (t rgText) String() string {
	if t.Text != nil {
		return *t.Text
	}
	b, _ := base64.StdEncoding.DecodeString(t.Bytes)
	return string(b)
}

type rgEvent struct {
	Type string `json:"type"`
	Data struct {
		Path       rgText `json:"path"`
		Lines      rgText `json:"lines"`
		LineNumber int    `json:"line_number"`
	} `json:"data"`
}

// readRGJSON reads rg --json output, stopping after limit+1 matches. keep
// filters the paths rg prints.
func readRGJSON(r io.Reader, dir string, limit int, keep func(string) bool) (grepResult, error) {
	var res grepResult
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 256<<20)
	matches := 0
	for sc.Scan() {
		var ev rgEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return res, fmt.Errorf("rg output: %v", err)
		}
		if ev.Type != "match" && ev.Type != "context" || !keep(ev.Data.Path.String()) {
			continue
		}
		path := filepath.Join(dir, ev.Data.Path.String())
		if n := len(res.Files); n == 0 || res.Files[n-1].Path != path {
			res.Files = append(res.Files, grepFile{Path: path})
		}
		f := &res.Files[len(res.Files)-1]
		text := strings.TrimSuffix(strings.TrimSuffix(ev.Data.Lines.String(), "\n"), "\r")
		l := grepLine{N: ev.Data.LineNumber, Text: text, Match: ev.Type == "match"}
		f.Lines = append(f.Lines, l)
		if l.Match {
			f.Count++
			if matches++; matches > limit {
				res.More = true
				break
			}
		}
	}
	// Files holding only context (a search cut short) are dropped.
	kept := res.Files[:0]
	for _, f := range res.Files {
		if f.Count > 0 {
			kept = append(kept, f)
		}
	}
	res.Files = kept
	return res, sc.Err()
}

// readRGCount reads rg --count --null output: "path\0count\n" per file.
func readRGCount(r io.Reader, dir string, keep func(string) bool) (grepResult, error) {
	var res grepResult
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		path, count, ok := strings.Cut(sc.Text(), "\x00")
		if !ok {
			return res, fmt.Errorf("rg output: unexpected line %q", sc.Text())
		}
		n, err := strconv.Atoi(count)
		if err != nil {
			return res, fmt.Errorf("rg output: bad count in %q", sc.Text())
		}
		if !keep(path) {
			continue
		}
		res.Files = append(res.Files, grepFile{Path: filepath.Join(dir, path), Count: n})
	}
	return res, sc.Err()
}
