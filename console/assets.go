package console

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed assets
var assetFS embed.FS

// CSP is the Content-Security-Policy of every console response: scripts
// and styles only from the server's own origin (no inline script, no
// eval), requests only to it, no frames, no plugins, no base or form
// targets elsewhere; images also from data: and blob: URLs (attached
// images are previewed from the browser's own memory).
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data: blob:; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// asset is one embedded file, ready to serve.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// Assets serves the console's embedded files: index.html at / and every
// file at /console/NAME. It answers GET and HEAD only.
type Assets struct {
	files map[string]asset // by URL path
}

// NewAssets loads the embedded files.
func NewAssets() *Assets {
	a := &Assets{files: map[string]asset{}}
	err := fs.WalkDir(assetFS, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := assetFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		ct := mime.TypeByExtension(path.Ext(p))
		switch path.Ext(p) {
		case ".js":
			ct = "text/javascript; charset=utf-8"
		case ".html":
			ct = "text/html; charset=utf-8"
		case ".css":
			ct = "text/css; charset=utf-8"
		}
		name := "/console/" + strings.TrimPrefix(p, "assets/")
		a.files[name] = asset{body: b, contentType: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		panic("console: embedded assets: " + err.Error()) // the binary was built without them
	}
	a.files["/"] = a.files["/console/index.html"]
	return a
}

// Size is the bytes of every embedded file (index.html once).
func (a *Assets) Size() int {
	n := 0
	for p, f := range a.files {
		if p != "/" {
			n += len(f.body)
		}
	}
	return n
}

// Has reports whether path names an embedded file.
func (a *Assets) Has(p string) bool {
	_, ok := a.files[p]
	return ok
}

// ServeHTTP serves the file r names with the console's security headers
// and an ETag; a file that does not exist is a 404.
func (a *Assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	SetHeaders(h)
	f, ok := a.files[r.URL.Path]
	if !ok {
		http.Error(w, "no such console file: "+r.URL.Path, http.StatusNotFound)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, r.Method+" is not allowed on the console's files: use GET", http.StatusMethodNotAllowed)
		return
	}
	h.Set("Content-Type", f.contentType)
	h.Set("ETag", f.etag)
	h.Set("Cache-Control", "no-cache") // revalidate: a new binary serves new files
	if inm := r.Header.Get("If-None-Match"); inm != "" && inm == f.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(f.body)
}

// SetHeaders sets the security headers of a console response: the CSP,
// no MIME sniffing, no referrer, no framing.
func SetHeaders(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}
