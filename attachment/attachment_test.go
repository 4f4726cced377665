package attachment

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tool"
)

// Smallest headers of each accepted type, padded to look like files.
var (
	pngData  = append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 32)...)
	jpegData = append([]byte("\xff\xd8\xff\xe0"), make([]byte, 32)...)
	gifData  = append([]byte("GIF89a"), make([]byte, 32)...)
	webpData = append([]byte("RIFF\x24\x00\x00\x00WEBPVP8 "), make([]byte, 32)...)
)

func TestSniff(t *testing.T) {
	for want, data := range map[string][]byte{"image/png": pngData, "image/jpeg": jpegData, "image/gif": gifData,
		"image/webp": webpData, "": []byte("<svg xmlns='http://www.w3.org/2000/svg'/>")} {
		if got := Sniff(data); got != want {
			t.Errorf("Sniff(%q) = %q, want %q", data[:8], got, want)
		}
	}
}

// LOOP-2, API: the image decoder's attack table: every hostile payload is
// refused with the kind of error the server maps to its status.
func TestDecodeAttacks(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString
	small := Limits{MaxImageBytes: 64, MaxTotalBytes: 100, MaxImages: 2}
	tests := []struct {
		name, data, declared string
		want                 error
	}{
		{"png", b64(pngData), "image/png", nil},
		{"png undeclared", b64(pngData), "", nil},
		{"jpg misspelt", b64(jpegData), "image/jpg", nil},
		{"unpadded", strings.TrimRight(b64(gifData), "="), "", nil},
		{"data url", "data:image/webp;base64," + b64(webpData), "", nil},
		{"attack: too big", b64(append(pngData, make([]byte, 64)...)), "image/png", ErrTooLarge},
		{"attack: huge payload not decoded", strings.Repeat("A", 1<<20), "", ErrTooLarge},
		{"attack: svg", b64([]byte("<svg onload='x'/>")), "image/svg+xml", ErrUnsupported},
		{"attack: svg undeclared", b64([]byte("<svg onload='alert(1)'/>")), "", ErrUnsupported},
		{"attack: html declared png", b64([]byte("<html><script>x</script>")), "image/png", ErrUnsupported},
		{"attack: lying declared type", b64(pngData), "image/jpeg", ErrMismatch},
		{"attack: lying data url", "data:image/gif;base64," + b64(pngData), "", ErrMismatch},
		{"attack: data url against media_type", "data:image/gif;base64," + b64(gifData), "image/png", ErrMismatch},
		{"attack: bad base64", "!!!not base64!!!", "", ErrInvalid},
		{"attack: url-safe alphabet", strings.ReplaceAll(b64(append(pngData, 0xfb, 0xff)), "/", "_"), "", ErrInvalid},
		{"attack: empty", "", "image/png", ErrInvalid},
		{"attack: data url not base64", "data:image/png," + b64(pngData), "", ErrInvalid},
		{"attack: executable", b64([]byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00")), "", ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, err := Decode("image 1", tt.data, tt.declared, small)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if err != nil {
				if !strings.HasPrefix(err.Error(), "image 1: ") {
					t.Errorf("error %q does not name the image", err)
				}
				return
			}
			if img.MediaType != Sniff(img.Data) || len(img.Data) == 0 {
				t.Errorf("image %s of %d bytes", img.MediaType, len(img.Data))
			}
		})
	}
}

func TestCheckSet(t *testing.T) {
	l := Limits{MaxImageBytes: 64, MaxTotalBytes: 100, MaxImages: 2}
	one, err := New("a", pngData, "", l)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSet([]llm.Image{one, one}, l); err != nil {
		t.Fatal(err)
	}
	if err := CheckSet([]llm.Image{one, one, one}, l); !errors.Is(err, ErrTooMany) {
		t.Errorf("three images: %v, want too many", err)
	}
	big, err := New("b", append(pngData, make([]byte, 20)...), "", l)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSet([]llm.Image{big, big}, l); !errors.Is(err, ErrTooLarge) {
		t.Errorf("120 bytes in all: %v, want too large", err)
	}
	if m, err := Message("", nil, l); m != nil || err != nil {
		t.Errorf("empty message: %v %v", m, err)
	}
	m, err := Message("look", []Named{{"a.png", one}}, l)
	if err != nil || len(m.Content) != 2 || m.TextOf() != "look" {
		t.Errorf("message %+v, %v", m, err)
	}
	if _, err := Message("look", []Named{{"a", one}, {"b", one}, {"c", one}}, l); !errors.Is(err, ErrTooMany) {
		t.Errorf("message of three: %v", err)
	}
}

func TestMentions(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"look at @shot.png, please", []string{"shot.png"}},
		{"@a.png and @b/c.jpg.", []string{"a.png", "b/c.jpg"}},
		{`see @"my shot.png" now`, []string{"my shot.png"}},
		{"mail me at bob@example.com", nil},
		{"(@x.gif)", []string{"x.gif"}},
		{"@ alone, @@, @\"unclosed", []string{"@"}},
		{"tab\t@t.webp\n", []string{"t.webp"}},
	}
	for _, tt := range tests {
		var got []string
		for _, m := range Mentions(tt.text) {
			got = append(got, m.Path)
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("Mentions(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// CLI: the mention resolver's attack table: no file outside the workspace
// or sensitive is attached, through a path or a symlink.
func TestResolverAttacks(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write := func(dir, rel string, data []byte) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(root, "shot.png", pngData)
	write(root, "dir/pic.jpeg", jpegData)
	write(root, "fake.png", []byte("#!/bin/sh\necho not an image\n"))
	write(root, "secret.key.png", pngData)
	write(root, ".ssh/id.png", pngData)
	write(outside, "out.png", pngData)
	link := func(target, rel string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(root, rel)); err != nil {
			t.Fatal(err)
		}
	}
	link(filepath.Join(outside, "out.png"), "escape.png")
	link(outside, "outdir")
	r := Resolver{Root: root, Sensitive: tool.NewSensitiveSet(append(tool.DefaultSensitiveFiles, "secret.*")), Limits: DefaultLimits}
	tests := []struct {
		prompt string
		want   []string
		err    string
	}{
		{"see @shot.png and @dir/pic.jpeg and @shot.png again", []string{"shot.png", "dir/pic.jpeg"}, ""},
		{"a text mention @main.go stays", nil, ""},
		{"@" + filepath.Join(root, "shot.png"), []string{filepath.Join(root, "shot.png")}, ""},
		{"attack: @../" + filepath.Base(outside) + "/out.png", nil, "outside the workspace"},
		{"attack: @" + filepath.Join(outside, "out.png"), nil, "outside the workspace"},
		{"attack: @escape.png", nil, "outside the workspace"},
		{"attack: @outdir/out.png", nil, "outside the workspace"},
		{"attack: @secret.key.png", nil, "sensitive file"},
		{"attack: @.ssh/id.png", nil, "sensitive file"},
		{"attack: @fake.png", nil, "not a PNG, JPEG, GIF or WebP"},
		{"attack: @missing.png", nil, "no such file"},
		{"attack: @dir.png", nil, ""}, // replaced below by a directory
	}
	if err := os.Mkdir(filepath.Join(root, "dir.png"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests[len(tests)-1].err = "not a regular file"
	for _, tt := range tests {
		got, err := r.Images(tt.prompt)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: err %v, want %q", tt.prompt, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.prompt, err)
			continue
		}
		var names []string
		for _, n := range got {
			names = append(names, n.Name)
		}
		if strings.Join(names, "|") != strings.Join(tt.want, "|") {
			t.Errorf("%q: attached %q, want %q", tt.prompt, names, tt.want)
		}
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.gif")
	if err := os.WriteFile(p, gifData, 0o600); err != nil {
		t.Fatal(err)
	}
	img, err := ReadFile(p, tool.NewSensitiveSet(tool.DefaultSensitiveFiles), DefaultLimits)
	if err != nil || img.MediaType != "image/gif" {
		t.Fatalf("%+v %v", img.MediaType, err)
	}
	if _, err := ReadFile(p, tool.NewSensitiveSet([]string{"*.gif"}), DefaultLimits); err == nil || !strings.Contains(err.Error(), "sensitive") {
		t.Errorf("sensitive: %v", err)
	}
	if _, err := ReadFile(p, tool.SensitiveSet{}, Limits{MaxImageBytes: 8}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("limit: %v", err)
	}
}
