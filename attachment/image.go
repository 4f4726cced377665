package attachment

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/reinhq/rein/llm"
)

// Limits bound the images of one user message. Sizes are of the decoded
// bytes.
type Limits struct {
	// MaxImageBytes bounds one image (default 5 MiB, the strictest of the
	// vendors' limits: Anthropic's).
	MaxImageBytes int
	// MaxTotalBytes bounds all the images of one message (default 20 MiB).
	MaxTotalBytes int
	// MaxImages bounds how many images one message carries (default 20).
	MaxImages int
}

// DefaultLimits are the limits rein applies everywhere.
var DefaultLimits = Limits{MaxImageBytes: 5 << 20, MaxTotalBytes: 20 << 20, MaxImages: 20}

// orDefault fills the zero fields of l with the defaults.
func (l Limits) orDefault() Limits {
	if l.MaxImageBytes <= 0 {
		l.MaxImageBytes = DefaultLimits.MaxImageBytes
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = DefaultLimits.MaxTotalBytes
	}
	if l.MaxImages <= 0 {
		l.MaxImages = DefaultLimits.MaxImages
	}
	return l
}

// MaxEncodedBytes is the length of the base64 text of the largest message
// the limits allow: what a request body carrying them may need, before its
// other fields.
func (l Limits) MaxEncodedBytes() int {
	return base64.StdEncoding.EncodedLen(l.orDefault().MaxTotalBytes)
}

// The kinds of error an attachment can fail with; every error returned by
// this package wraps one of them.
var (
	// ErrTooLarge: an image, or a message's images together, exceed the limits.
	ErrTooLarge = errors.New("image too large")
	// ErrTooMany: more images than a message may carry.
	ErrTooMany = errors.New("too many images")
	// ErrUnsupported: not a PNG, JPEG, GIF or WebP image, or a declared
	// media type outside that list.
	ErrUnsupported = errors.New("unsupported image type")
	// ErrMismatch: the declared media type is not what the bytes are.
	ErrMismatch = errors.New("declared media type does not match the image")
	// ErrInvalid: malformed input (bad base64, an empty image, a path that
	// is no file).
	ErrInvalid = errors.New("invalid attachment")
)

// MediaTypes are the image types rein accepts, the ones every vision
// vendor takes.
var MediaTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// Sniff returns the media type of data from its magic bytes, or "" when it
// is none of [MediaTypes] (llm.SniffImage).
func Sniff(data []byte) string { return llm.SniffImage(data) }

// normalType lowercases a declared media type and drops its parameters;
// image/jpg, a common misspelling, is image/jpeg.
func normalType(t string) string {
	t, _, _ = strings.Cut(t, ";")
	t = strings.ToLower(strings.TrimSpace(t))
	if t == "image/jpg" {
		t = "image/jpeg"
	}
	return t
}

func supported(t string) bool {
	for _, m := range MediaTypes {
		if m == t {
			return true
		}
	}
	return false
}

// New checks data as one image: not empty, within the per-image limit, of
// a type in [MediaTypes] by its bytes, and, when declared is not empty,
// declared as what it is. name says which image in errors.
func New(name string, data []byte, declared string, l Limits) (llm.Image, error) {
	l = l.orDefault()
	if len(data) == 0 {
		return llm.Image{}, fmt.Errorf("%s: %w: the image is empty", name, ErrInvalid)
	}
	if len(data) > l.MaxImageBytes {
		return llm.Image{}, fmt.Errorf("%s: %w: %s, over the limit of %s per image; scale it down or crop it",
			name, ErrTooLarge, sizeText(len(data)), sizeText(l.MaxImageBytes))
	}
	d := normalType(declared)
	if d != "" && !supported(d) {
		return llm.Image{}, fmt.Errorf("%s: %w: %q is not one of %s", name, ErrUnsupported, declared, strings.Join(MediaTypes, ", "))
	}
	got := Sniff(data)
	if got == "" {
		return llm.Image{}, fmt.Errorf("%s: %w: its bytes are not a PNG, JPEG, GIF or WebP image; convert it to one of those",
			name, ErrUnsupported)
	}
	if d != "" && d != got {
		return llm.Image{}, fmt.Errorf("%s: %w: declared %s, but the bytes are %s; declare %s or leave media_type out",
			name, ErrMismatch, d, got, got)
	}
	return llm.Image{MediaType: got, Data: data}, nil
}

// Decode decodes the standard base64 (padding optional) of one image, or a
// data URL (data:image/png;base64,…) whose type counts as declared, and
// checks it as [New] does. The length is checked before anything is
// decoded, so an oversized payload costs no memory.
func Decode(name, encoded, declared string, l Limits) (llm.Image, error) {
	l = l.orDefault()
	if rest, ok := strings.CutPrefix(encoded, "data:"); ok {
		meta, payload, found := strings.Cut(rest, ",")
		t, isB64 := strings.CutSuffix(meta, ";base64")
		if !found || !isB64 {
			return llm.Image{}, fmt.Errorf("%s: %w: a data URL must read data:<media type>;base64,<data>", name, ErrInvalid)
		}
		if declared != "" && t != "" && normalType(declared) != normalType(t) {
			return llm.Image{}, fmt.Errorf("%s: %w: media_type %s differs from the data URL's %s", name, ErrMismatch, declared, t)
		}
		if declared == "" {
			declared = t
		}
		encoded = payload
	}
	encoded = strings.TrimRight(encoded, "=")
	if base64.RawStdEncoding.DecodedLen(len(encoded)) > l.MaxImageBytes {
		return llm.Image{}, fmt.Errorf("%s: %w: about %s decoded, over the limit of %s per image; scale it down or crop it",
			name, ErrTooLarge, sizeText(base64.RawStdEncoding.DecodedLen(len(encoded))), sizeText(l.MaxImageBytes))
	}
	data, err := base64.RawStdEncoding.Strict().DecodeString(encoded)
	if err != nil {
		return llm.Image{}, fmt.Errorf("%s: %w: the data is not standard base64 (%v)", name, ErrInvalid, err)
	}
	return New(name, data, declared, l)
}

// CheckSet checks the images of one message together: their count and
// their total size.
func CheckSet(imgs []llm.Image, l Limits) error {
	l = l.orDefault()
	if len(imgs) > l.MaxImages {
		return fmt.Errorf("%w: %d images, a message carries at most %d; send the rest in another message",
			ErrTooMany, len(imgs), l.MaxImages)
	}
	total := 0
	for _, img := range imgs {
		total += len(img.Data)
	}
	if total > l.MaxTotalBytes {
		return fmt.Errorf("%w: the images total %s, over the limit of %s per message; send fewer or smaller ones",
			ErrTooLarge, sizeText(total), sizeText(l.MaxTotalBytes))
	}
	return nil
}

// sizeText writes a byte count for people.
func sizeText(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
