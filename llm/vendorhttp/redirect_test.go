package vendorhttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reinhq/rein/llm"
)

// A hostile endpoint answers 307 to another host: the credentials must not
// follow. The other host is "localhost" where the first was 127.0.0.1, the
// case net/http itself would forward every header but Authorization to.
func TestGuardRedirects(t *testing.T) {
	var stolen atomic.Int32
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("x-api-key") != "" {
			stolen.Add(1)
		}
	}))
	defer thief.Close()
	elsewhere := strings.Replace(thief.URL, "127.0.0.1", "localhost", 1)
	same := 0
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, elsewhere+"/v1", http.StatusTemporaryRedirect)
		case "/port":
			http.Redirect(w, r, thief.URL+"/v1", http.StatusTemporaryRedirect)
		case "/here":
			same++
			http.Redirect(w, r, "/v1", http.StatusTemporaryRedirect)
		default:
			w.WriteHeader(http.StatusOK)
		}
	}))
	defer api.Close()
	c := GuardRedirects(nil)
	post := func(path string) error {
		req, _ := http.NewRequest(http.MethodPost, api.URL+path, strings.NewReader("{}"))
		req.Header.Set("x-api-key", "sk-secret")
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	for _, path := range []string{"/away", "/port"} {
		err := post(path)
		if err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("%s: %v; want the redirect refused", path, err)
			continue
		}
		if e := FromRoundTrip(context.Background(), "p", err); e.Kind != llm.KindUnknown {
			t.Errorf("%s: kind %v; a refused redirect must not be retried", path, e.Kind)
		}
	}
	if n := stolen.Load(); n != 0 {
		t.Errorf("the key reached the other host %d times", n)
	}
	if err := post("/here"); err != nil || same != 1 {
		t.Errorf("a redirect within the host: %v (%d)", err, same)
	}
	if http.DefaultClient.CheckRedirect != nil {
		t.Error("GuardRedirects changed http.DefaultClient")
	}
}
