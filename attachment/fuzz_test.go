package attachment

import (
	"encoding/base64"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzMentions: every mention found is a span of the text starting with
// @, holding its path, and mentions do not overlap.
func FuzzMentions(f *testing.F) {
	for _, s := range []string{"see @a.png, @\"b c.jpg\" and x@y.z", "@", "@\"", "(@x)", "@\"\"", "a @é.png."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		last := 0
		for _, m := range Mentions(text) {
			if m.Start < last || m.End > len(text) || m.Start >= m.End {
				t.Fatalf("mention %+v out of order or bounds in %q", m, text)
			}
			span := text[m.Start:m.End]
			if span[0] != '@' || !strings.Contains(span, m.Path) || m.Path == "" || !utf8.ValidString(m.Path) {
				t.Fatalf("mention %+v: span %q", m, span)
			}
			last = m.End
		}
	})
}

// FuzzDecode: the decoder never panics, and what it accepts is an image
// of an accepted type within the limit, whose declared type (if any) is
// what its bytes are.
func FuzzDecode(f *testing.F) {
	for _, d := range [][]byte{pngData, jpegData, gifData, webpData, []byte("<svg/>")} {
		f.Add(base64.StdEncoding.EncodeToString(d), "")
		f.Add("data:image/png;base64,"+base64.StdEncoding.EncodeToString(d), "image/png")
	}
	l := Limits{MaxImageBytes: 256}
	f.Fuzz(func(t *testing.T, encoded, declared string) {
		img, err := Decode("x", encoded, declared, l)
		if err != nil {
			return
		}
		if len(img.Data) == 0 || len(img.Data) > 256 || Sniff(img.Data) != img.MediaType || !supported(img.MediaType) {
			t.Fatalf("accepted %s of %d bytes", img.MediaType, len(img.Data))
		}
		if d := normalType(declared); d != "" && d != img.MediaType {
			t.Fatalf("declared %q accepted as %s", declared, img.MediaType)
		}
	})
}
