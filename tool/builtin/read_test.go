package builtin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/llm"
)

func TestReadFileNumbersLines(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "one\ntwo\r\nthree\n"})
	tr := NewFileTracker()
	res := runTool(t, NewReadFile(ftBackend{}, tr), dir, map[string]any{"path": "a.txt"})
	want := "     1\tone\n     2\ttwo\n     3\tthree\n"
	if diff := cmp.Diff(want, res.TextOf()); diff != "" || res.IsError {
		t.Fatalf("output (-want +got):\n%s", diff)
	}
	rec, ok := tr.Get(filepath.Join(dir, "a.txt"))
	if !ok || !rec.Read || rec.Span != "lines 1-3 of 3" || rec.Preview != "one | two | three" {
		t.Fatalf("tracker record %+v", rec)
	}
}

func TestReadFileOffsetLimit(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	writeFiles(t, dir, map[string]string{"big.txt": b.String(), "long.txt": strings.Repeat("é", 3000) + "\nshort\n"})
	rf := NewReadFile(ftBackend{}, NewFileTracker())
	tests := []struct {
		name   string
		input  map[string]any
		first  string
		last   string
		remain string
	}{
		{"default limit 2000", map[string]any{"path": "big.txt"}, "     1\tline 1\n", "  2000\tline 2000\n", "… 1000 more lines; call again with offset=2001"},
		{"offset and limit", map[string]any{"path": "big.txt", "offset": 10, "limit": 2}, "    10\tline 10\n", "    11\tline 11\n", "… 2989 more lines; call again with offset=12"},
		{"tail", map[string]any{"path": "big.txt", "offset": 2999}, "  2999\tline 2999\n", "  3000\tline 3000\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runTool(t, rf, dir, tt.input)
			mustContain(t, res, false, tt.first, tt.last)
			if got := strings.HasPrefix(res.TextOf(), tt.first); !got {
				t.Errorf("does not start with %q", tt.first)
			}
			if tt.remain == "" && strings.Contains(res.TextOf(), "more line") {
				t.Errorf("says more lines remain:\n%s", res.TextOf())
			}
			if tt.remain != "" {
				mustContain(t, res, false, tt.remain)
			}
		})
	}
	res := runTool(t, rf, dir, map[string]any{"path": "long.txt"})
	mustContain(t, res, false, "[line cut: 3000 chars]", "     2\tshort", "lines longer than 2000 characters were cut")
	if strings.Contains(res.TextOf(), "\uFFFD") {
		t.Errorf("cut split a rune")
	}
}

func TestReadFileRefusals(t *testing.T) {
	dir := t.TempDir()
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 64)...)
	writeFiles(t, dir, map[string]string{
		"bin.dat":    "abc\x00def",
		"latin1.txt": strings.Repeat("\xe9\xe8\xff", 100),
		"empty.txt":  "",
		"config.yml": "a: 1\n",
		"sub/x.txt":  "x\n",
		"short.txt":  "1\n2\n",
		"img.png":    string(png),
	})
	rf := NewReadFile(ftBackend{}, NewFileTracker())
	tests := []struct {
		input   map[string]any
		wantErr bool
		subs    []string
	}{
		{map[string]any{"path": "bin.dat"}, true, []string{"binary file", "7 bytes"}},
		{map[string]any{"path": "latin1.txt"}, true, []string{"binary file"}},
		{map[string]any{"path": "empty.txt"}, false, []string{"empty"}},
		{map[string]any{"path": "sub"}, true, []string{"directory", "list_dir"}},
		{map[string]any{"path": "config.yaml"}, true, []string{"does not exist", "config.yml"}},
		{map[string]any{"path": "short.txt", "offset": 5}, true, []string{"past the end", "2 lines"}},
	}
	for _, tt := range tests {
		mustContain(t, runTool(t, rf, dir, tt.input), tt.wantErr, tt.subs...)
	}
	res := runTool(t, rf, dir, map[string]any{"path": "img.png"})
	mustContain(t, res, false, "image/png")
	var img *llm.Image
	for _, b := range res.Content {
		if i, ok := b.(*llm.Image); ok {
			img = i
		}
	}
	if img == nil || img.MediaType != "image/png" || len(img.Data) != len(png) {
		t.Fatalf("no png image block in %+v", res.Content)
	}
}

func TestReadFileImageCap(t *testing.T) {
	dir := t.TempDir()
	big := append([]byte("GIF89a"), make([]byte, readMaxImage)...)
	if err := os.WriteFile(filepath.Join(dir, "big.gif"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	res := runTool(t, NewReadFile(ftBackend{}, NewFileTracker()), dir, map[string]any{"path": "big.gif"})
	mustContain(t, res, true, "image/gif", "5.0 MB")
}

func TestLooksBinary(t *testing.T) {
	tests := []struct {
		data string
		want bool
	}{
		{"plain text\n", false},
		{"héllo wörld — ok", false},
		{"a\x00b", true},
		{strings.Repeat("\xff\xfe", 50), true},
		{strings.Repeat("a", 100) + "\xff", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := looksBinary([]byte(tt.data)); got != tt.want {
			t.Errorf("%q: %v, want %v", tt.data, got, tt.want)
		}
	}
}

func TestReadFileOutputCap(t *testing.T) {
	dir := t.TempDir()
	line := strings.Repeat("x", 1500)
	var b strings.Builder
	for i := 0; i < 500; i++ {
		b.WriteString(line + "\n")
	}
	writeFiles(t, dir, map[string]string{"wide.txt": b.String()})
	res := runTool(t, NewReadFile(ftBackend{}, NewFileTracker()), dir, map[string]any{"path": "wide.txt"})
	if len(res.TextOf()) > readMaxOutput+2000 {
		t.Fatalf("%d bytes returned, over the cap", len(res.TextOf()))
	}
	n := strings.Count(res.TextOf(), "\t")
	mustContain(t, res, false, fmt.Sprintf("… %d more lines; call again with offset=%d", 500-n, n+1))
}
