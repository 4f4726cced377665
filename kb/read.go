package kb

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"
	"unicode/utf8"
)

// sniffLen is how much of a file is searched for a NUL byte, the sign of a
// binary file.
const sniffLen = 8 << 10

// loaded is a file read and chunked, or the reason it cannot be indexed.
type loaded struct {
	rel       string
	size      int64
	hash      string
	skip      string
	unchanged bool
	chunks    []Chunk
}

// load reads a file, checks that it is indexable text, hashes it and,
// unless its document is unchanged, chunks it.
func (b *Base) load(f file, existing map[string]Document) loaded {
	l := loaded{rel: f.rel}
	data, size, reason := b.read(f.abs)
	l.size = size
	if reason != "" {
		l.skip = reason
		return l
	}
	sum := sha256.Sum256(data)
	l.hash = hex.EncodeToString(sum[:]) + "+" + IndexVersion
	if d, ok := existing[f.rel]; ok && d.Hash == l.hash && d.Embedding == b.cfg.EmbeddingModel {
		l.unchanged = true
		return l
	}
	text := string(data)
	if len(text) >= 3 && text[:3] == "\uFEFF" { // a byte order mark says nothing
		text = text[3:]
	}
	l.chunks = Split(f.rel, text, b.cfg.Chunk)
	return l
}

// read returns a file's content and size, or why it cannot be indexed.
func (b *Base) read(path string) ([]byte, int64, string) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, 0, "cannot read: " + errText(err)
	}
	defer fh.Close()
	info, err := fh.Stat()
	if err != nil {
		return nil, 0, "cannot read: " + errText(err)
	}
	if !info.Mode().IsRegular() {
		return nil, 0, "not a regular file"
	}
	limit := b.cfg.MaxFileSize
	if info.Size() > limit {
		return nil, info.Size(), tooLarge(info.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, int64(len(data)), "cannot read: " + errText(err)
	}
	size := int64(len(data))
	if size > limit { // it grew since the Stat
		return nil, size, tooLarge(size, limit)
	}
	if i := bytes.IndexByte(data[:min(len(data), sniffLen)], 0); i >= 0 {
		return nil, size, fmt.Sprintf("binary (a NUL byte at byte %s): only text files are indexed", thousands(int64(i)))
	}
	if !utf8.Valid(data) {
		return nil, size, fmt.Sprintf("not valid UTF-8 at byte %s: convert it to UTF-8 to index it", thousands(int64(invalidUTF8(data))))
	}
	return data, size, ""
}

func tooLarge(size, limit int64) string {
	return fmt.Sprintf("too large: %s > %s limit; raise kb.max_file_size to index it", humanBytes(size), humanBytes(limit))
}

// invalidUTF8 returns the offset of the first invalid UTF-8 sequence.
func invalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		if data[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(data)
}

// humanBytes formats a size as people read it: 512 B, 1.8 MiB.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	s := strconv.FormatFloat(v, 'f', 1, 64)
	if v == float64(int64(v)) {
		s = strconv.FormatInt(int64(v), 10)
	}
	return s + " " + string("KMGTPE"[exp]) + "iB"
}

// thousands formats n with thousands separators: 1,234.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
