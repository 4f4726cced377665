package builtin

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/tool"
)

// BashPreviewChars is how many characters of an output above the cap the
// model sees, head and tail together (less when the cap is smaller); the
// whole output is saved to a file it can read. It holds for every
// [RenderOutput].
const BashPreviewChars = 2_000

// RenderOutput returns what the model sees of a command's output: all of it
// up to limit characters (0 or less means [BashOutputCap]), else the head and
// the tail, [BashPreviewChars] together, around a line saying how much was
// cut and where the whole output was saved. It is the bash tool's rendering,
// shared by the tools that run commands, so that their outputs read alike.
//
// The whole output is saved in call.SessionDir (os.TempDir()/rein when
// empty) as prefix+call.ID+".log" (a unique prefix*.log when the id has no
// usable characters): out.Combined, or the backend's spill file
// (out.SpillPath) moved there. path is the saved file, "" when nothing was
// saved; err says why the whole output could not be kept, and the text says
// so too.
func RenderOutput(call tool.Call, out exec.Output, limit int, prefix string) (text, path string, err error) {
	if limit <= 0 {
		limit = BashOutputCap
	}
	whole, spill, truncated := out.Combined, out.SpillPath, out.Truncated
	if truncated && spill != "" && !out.OutputLimited && out.TotalBytes <= int64(utf8.UTFMax*limit) {
		// Spilled by a small memory cap but short enough to show: read it back.
		if data, rerr := os.ReadFile(spill); rerr == nil {
			whole, truncated = data, false
			os.Remove(spill)
			spill = ""
		}
	}
	// Above the cap the model sees a short preview, head and tail, and the
	// path of the whole output (SPEC CTX-5: a big output costs its preview
	// on every later turn, not tens of kilobytes).
	budget := min(limit*2/5, BashPreviewChars/2)
	var head, tail string
	var total int64
	if !truncated {
		s := clean(whole)
		if utf8.RuneCountInString(s) <= limit {
			if strings.TrimSpace(s) == "" {
				return "(no output)", "", nil
			}
			return strings.TrimRight(s, "\n"), "", nil
		}
		head, tail, total = headOf(s, budget), tailOf(s, budget), int64(len(whole))
		path, err = saveOutput(call, prefix, whole, "")
	} else {
		head, tail, total = headOf(clean(out.Combined), budget), tailOf(clean(dropPartialRune(out.Tail)), budget), out.TotalBytes
		if spill == "" {
			err = fmt.Errorf("output beyond %d bytes was not kept", len(out.Combined))
		} else {
			path, err = saveOutput(call, prefix, nil, spill)
		}
	}
	cut := max(0, total-int64(len(head))-int64(len(tail)))
	var mid string
	switch {
	case err == nil && out.OutputLimited:
		mid = fmt.Sprintf("[… %d bytes cut; the output passed the limit of %s, so the command was stopped; the first %s are in %s: read it with read_file, using offset and limit …]",
			cut, FormatBytes(out.OutputLimit), FormatBytes(out.SpillBytes), path)
	case err == nil:
		mid = fmt.Sprintf("[… %d bytes cut; the whole output (%d bytes) is in %s: read it with read_file, using offset and limit …]", cut, total, path)
	default:
		mid = fmt.Sprintf("[… %d bytes cut; the whole output (%d bytes) could not be saved …]", cut, total)
	}
	return strings.TrimRight(head, "\n") + "\n\n" + mid + "\n\n" + strings.TrimRight(tail, "\n"), path, err
}

// FormatBytes prints a size in binary units with at most one decimal:
// 512 B, 1.5 KiB, 64 MiB, 2.4 GiB.
func FormatBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v := float64(n)
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	i := 0
	for v /= 1024; v >= 1024 && i < len(units)-1; i++ {
		v /= 1024
	}
	return strings.TrimSuffix(strconv.FormatFloat(v, 'f', 1, 64), ".0") + " " + units[i]
}

func clean(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }

// dropPartialRune drops the continuation bytes a ring buffer may start with.
func dropPartialRune(b []byte) []byte {
	for i := 0; i < len(b) && i < utf8.UTFMax; i++ {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	return b
}

// headOf returns the first n runes of s, ending at a line break when one is
// in the last fifth.
func headOf(s string, n int) string {
	i, count := 0, 0
	for i < len(s) && count < n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	h := s[:i]
	if j := strings.LastIndexByte(h, '\n'); j >= 0 && j >= len(h)*4/5 {
		h = h[:j+1]
	}
	return h
}

// tailOf returns the last n runes of s, starting at a line start when one is
// in the first fifth.
func tailOf(s string, n int) string {
	i, count := len(s), 0
	for i > 0 && count < n {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
		count++
	}
	t := s[i:]
	if j := strings.IndexByte(t, '\n'); j >= 0 && j < len(t)/5 && j+1 < len(t) {
		t = t[j+1:]
	}
	return t
}

// saveOutput stores a command's whole output in the session directory (or
// os.TempDir()/rein), in a file named prefix and the call's id: data, or the
// backend's spill file moved there.
func saveOutput(call tool.Call, prefix string, data []byte, spill string) (string, error) {
	dir := call.SessionDir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "rein")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	var dest string
	if id := safeName(call.ID); id != "" {
		dest = filepath.Join(dir, prefix+id+".log")
	} else {
		f, err := os.CreateTemp(dir, prefix+"*.log")
		if err != nil {
			return "", err
		}
		dest = f.Name()
		f.Close()
	}
	if spill == "" {
		return dest, os.WriteFile(dest, data, 0o600)
	}
	if err := os.Rename(spill, dest); err == nil {
		return dest, nil
	}
	err := copyFile(spill, dest)
	os.Remove(spill)
	return dest, err
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// safeName keeps the characters of a call id that are safe in a file name.
func safeName(id string) string {
	var b strings.Builder
	for _, r := range id {
		if r < utf8.RuneSelf && (r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		}
	}
	if b.Len() > 100 {
		return b.String()[:100]
	}
	return b.String()
}
