package attachment

import (
	"bytes"
	"encoding/base64"
	"testing"
)

// BenchmarkDecode decodes and checks a 5 MiB image posted as base64.
func BenchmarkDecode(b *testing.B) {
	data := append(append([]byte(nil), pngData...), bytes.Repeat([]byte{3}, 5<<20-len(pngData))...)
	enc := base64.StdEncoding.EncodeToString(data)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode("x", enc, "image/png", DefaultLimits); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMentions scans a 64 KiB prompt with a mention per line.
func BenchmarkMentions(b *testing.B) {
	text := bytes.Repeat([]byte("look at @shots/a.png, then mail x@y.z\n"), 64<<10/38)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Mentions(string(text))
	}
}
