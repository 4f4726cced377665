package jsonl

import (
	"bytes"
	"slices"
	"testing"
)

// FuzzEachLineBack: eachLineBack visits the complete lines of a file, last
// first, with the offset just past each, as a forward split finds them —
// for lines longer than its window too.
func FuzzEachLineBack(f *testing.F) {
	f.Add([]byte("a\nb\n"), 0)
	f.Add([]byte("a\nb"), 0)
	f.Add([]byte("\n\n\n"), 0)
	f.Add([]byte("x"), 70000)
	f.Add([]byte("\x00\x00"), 0)
	f.Fuzz(func(t *testing.T, data []byte, long int) {
		if long > 0 {
			// A line longer than the first window.
			data = append(bytes.Repeat([]byte{'y'}, long%(300<<10)), append([]byte("\n"), data...)...)
		}
		type seen struct {
			line string
			next int64
		}
		var want []seen
		off := int64(0)
		for {
			i := bytes.IndexByte(data[off:], '\n')
			if i < 0 {
				break
			}
			want = append(want, seen{string(data[off : off+int64(i)]), off + int64(i) + 1})
			off += int64(i) + 1
		}
		slices.Reverse(want)
		var got []seen
		if err := eachLineBack(bytes.NewReader(data), int64(len(data)), func(line []byte, next int64) bool {
			got = append(got, seen{string(line), next})
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("eachLineBack(%q):\n got %v\nwant %v", data, got, want)
		}
	})
}
