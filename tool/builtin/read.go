package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tool"
)

// Limits of read_file.
const (
	readDefaultLimit = 2000      // lines per call
	readMaxLineLen   = 2000      // bytes per line before it is cut
	readMaxOutput    = 100 << 10 // bytes of numbered text per call
	readMaxFile      = 32 << 20  // larger files are refused
	readMaxImage     = 5 << 20   // larger images are refused
	binarySample     = 8000      // bytes looked at to tell binary from text
	binaryInvalidMax = 0.3       // share of invalid UTF-8 that makes a file binary
	readMaxSuggest   = 5         // similar names suggested for a missing file
)

var readSchema = tool.NewStaticSchema[readIn](func(s *jsonschema.Schema) {
	minimum(prop(s, "offset"), 1)
	minimum(prop(s, "limit"), 1)
})

type readIn struct {
	Path   string `json:"path"`
	Offset int    `json:"offset,omitempty" jsonschema:"first line, 1-based"`
	Limit  int    `json:"limit,omitempty" jsonschema:"default 2000"`
}

const readDesc = "Reads a file, lines numbered like `cat -n`; PNG, JPEG, GIF and WebP come back as images."

// NewReadFile returns the read_file tool. Reads go through b and are
// recorded in t.
func NewReadFile(b exec.Backend, t *FileTracker) tool.Tool {
	r := &fileReader{b: fenced(b, Fence{}), t: t}
	return tool.DefineStatic("read_file", readDesc, metaRead, readSchema, r.run)
}

type fileReader struct {
	b exec.Backend
	t *FileTracker
}

func (r *fileReader) run(ctx context.Context, call tool.Call, in readIn) (tool.Result, error) {
	if in.Path == "" {
		return tool.Errorf("path is empty: give the file to read"), nil
	}
	abs := resolvePath(call, in.Path)
	info, err := r.b.Stat(ctx, abs)
	if err != nil {
		return statError(in.Path, abs, err), nil
	}
	if info.IsDir() {
		return tool.Errorf("%s is a directory; use list_dir to see its entries", in.Path), nil
	}
	if info.Size() > readMaxFile {
		return tool.Errorf("%s is %s, more than read_file reads (%s); use grep to find the part you need",
			in.Path, sizeText(info.Size()), sizeText(readMaxFile)), nil
	}
	data, err := r.b.ReadFile(ctx, abs)
	if err != nil {
		return tool.Errorf("cannot read %s: %v", in.Path, err), nil
	}
	meta := map[string]any{"path": abs, "bytes": len(data)}
	if mt := llm.SniffImage(data); mt != "" {
		if len(data) > readMaxImage {
			return tool.Errorf("%s is a %s image of %s, more than the %s read_file returns",
				in.Path, mt, sizeText(int64(len(data))), sizeText(readMaxImage)), nil
		}
		r.t.RecordRead(abs, info, data, Span{Preview: "[" + mt + " image]"})
		meta["media_type"] = mt
		return tool.Result{Content: []llm.Block{
			&llm.Text{Text: fmt.Sprintf("Image %s (%s, %s):", in.Path, mt, sizeText(int64(len(data))))},
			&llm.Image{MediaType: mt, Data: data},
		}, Metadata: meta}, nil
	}
	if looksBinary(data) {
		r.t.RecordRead(abs, info, data, Span{Preview: "[binary]"})
		return tool.Errorf("%s is a binary file (%s); read_file shows text only", in.Path, sizeText(int64(len(data)))), nil
	}
	text := string(data)
	total := countLines(text)
	if total == 0 {
		r.t.RecordRead(abs, info, data, Span{})
		res := tool.Text(fmt.Sprintf("%s is empty (0 bytes).", in.Path))
		res.Metadata = meta
		return res, nil
	}
	offset := max(in.Offset, 1)
	if offset > total {
		return tool.Errorf("offset %d is past the end of %s, which has %s", offset, in.Path, plural(total, "line")), nil
	}
	limit := in.Limit
	if limit <= 0 {
		limit = readDefaultLimit
	}
	out, end := numberLines(text, offset, limit)
	pv := preview(linesOf(text, offset, end))
	r.t.RecordRead(abs, info, data, Span{Start: offset, End: end, Total: total, Preview: pv})
	meta["start_line"], meta["end_line"], meta["total_lines"], meta["preview"] = offset, end, total, pv
	if end < total {
		word := "lines"
		if total-end == 1 {
			word = "line"
		}
		fmt.Fprintf(out, "… %d more %s; call again with offset=%d\n", total-end, word, end+1)
	}
	res := tool.Text(out.String())
	res.Metadata = meta
	return res, nil
}

// numberLines formats lines offset.. of text (1-based) in cat -n style, at
// most limit lines and readMaxOutput bytes. It returns the text and the
// number of the last line shown.
func numberLines(text string, offset, limit int) (*strings.Builder, int) {
	var b strings.Builder
	n, end, cut := 0, offset-1, false
	for len(text) > 0 {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		n++
		if n < offset {
			continue
		}
		if n >= offset+limit {
			break
		}
		line = strings.TrimSuffix(line, "\r")
		line, c := cutLine(line, readMaxLineLen)
		cut = cut || c
		if b.Len()+len(line) > readMaxOutput && n > offset {
			break
		}
		numbered(&b, n, line)
		end = n
	}
	if cut {
		fmt.Fprintf(&b, "(lines longer than %d characters were cut)\n", readMaxLineLen)
	}
	return &b, end
}

// linesOf returns lines start..end (1-based, inclusive) of text.
func linesOf(text string, start, end int) string {
	var b strings.Builder
	n := 0
	for len(text) > 0 && n < end {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i+1], text[i+1:]
		} else {
			text = ""
		}
		n++
		if n >= start {
			b.WriteString(line)
		}
	}
	return b.String()
}

// looksBinary says whether data is not text: it holds a NUL byte, or much
// of its start is not UTF-8.
func looksBinary(data []byte) bool {
	sample := data[:min(len(data), binarySample)]
	if bytes.IndexByte(sample, 0) >= 0 {
		return true
	}
	invalid := 0
	for i := 0; i < len(sample); {
		r, size := utf8.DecodeRune(sample[i:])
		if r == utf8.RuneError && size <= 1 {
			if len(sample) < len(data) && len(sample)-i < utf8.UTFMax {
				break // a rune cut by the sample's end
			}
			invalid++
		}
		i += max(size, 1)
	}
	return len(sample) > 0 && float64(invalid)/float64(len(sample)) > binaryInvalidMax
}

// statError explains why a file cannot be looked at, suggesting similar
// names when it does not exist.
func statError(shown, abs string, err error) tool.Result {
	if !errors.Is(err, fs.ErrNotExist) {
		return tool.Errorf("cannot access %s: %v", shown, err)
	}
	msg := fmt.Sprintf("%s does not exist", shown)
	if s := similarNames(abs); len(s) > 0 {
		msg += "; similar names in " + filepath.Dir(shown) + ": " + strings.Join(s, ", ")
	}
	return tool.Errorf("%s", msg)
}

// similarNames lists entries of abs's directory whose names resemble its
// base name.
func similarNames(abs string) []string {
	entries, err := os.ReadDir(filepath.Dir(abs))
	if err != nil {
		return nil
	}
	base := strings.ToLower(filepath.Base(abs))
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	if stem == "" {
		stem = base
	}
	var out []string
	for _, e := range entries {
		name := strings.ToLower(e.Name())
		other := strings.TrimSuffix(name, filepath.Ext(name))
		if strings.Contains(name, stem) || (other != "" && strings.Contains(stem, other)) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out[:min(len(out), readMaxSuggest)]
}

// sizeText formats a byte count.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
