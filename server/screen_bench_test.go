package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// nopWriter is a ResponseWriter that keeps nothing but its header.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *nopWriter) WriteHeader(int)             {}

// BenchmarkScreen measures the screen alone (SPEC API-8) — what it adds
// to every request — on the requests it sees most: curl's (no Origin), a
// page of the server's own origin, a listed origin with its CORS headers,
// and the refusal of a rebinding Host.
func BenchmarkScreen(b *testing.B) {
	hosts, err := newHostPolicy([]string{"rein.example.com"})
	if err != nil {
		b.Fatal(err)
	}
	origins, err := newOriginPolicy([]string{"https://app.example.com"}, false)
	if err != nil {
		b.Fatal(err)
	}
	s := &Server{hosts: hosts, origins: origins}
	for _, c := range []struct {
		name, host string
		hdr        []string
		pass       bool
	}{
		{"curl POST", "localhost:7878", []string{"Content-Type", "application/json"}, true},
		{"own page POST", "127.0.0.1:7878", []string{"Content-Type", "application/json", "Origin", "http://127.0.0.1:7878", "Sec-Fetch-Site", "same-origin"}, true},
		{"listed origin POST", "rein.example.com", []string{"Content-Type", "application/json; charset=utf-8", "Origin", "https://app.example.com", "Sec-Fetch-Site", "cross-site"}, true},
		{"rebinding Host", "attacker.example:7878", []string{"Content-Type", "application/json"}, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			req := httptest.NewRequest("POST", "http://x/sessions/s1/messages", strings.NewReader(`{"text":"hi"}`))
			req.Host = c.host
			for i := 0; i+1 < len(c.hdr); i += 2 {
				req.Header.Set(c.hdr[i], c.hdr[i+1])
			}
			w := &nopWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				if s.screen(w, req) != c.pass {
					b.Fatalf("screen passed %v, want %v", !c.pass, c.pass)
				}
			}
		})
	}
}
