package cli

import (
	"bytes"
	"context"
	"iter"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reinhq/rein/llm"
)

// cancelOn is a writer that cancels a run once what was written holds
// want; it keeps everything written.
type cancelOn struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	want   string
	cancel context.CancelFunc
}

func (w *cancelOn) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.cancel()
	}
	return len(p), nil
}

func (w *cancelOn) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// closedURL is the URL of a loopback port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	return url
}

// CLI-4, PROV-7: a base URL nothing answers on is said at its first
// failed attempt — not after minutes of retries in silence — with the URL
// and what set it (the variable, or the profile), while the retries go
// on. The run is cancelled at that first line: nothing here waits on a
// clock.
func TestUnreachableBaseURLSaidAtOnce_CLI4(t *testing.T) {
	tests := []struct {
		name  string
		setup func(te *testEnv, url string) string // returns the model
		want  string
	}{
		{"variable", func(te *testEnv, url string) string {
			te.env["ANTHROPIC_API_KEY"], te.env["ANTHROPIC_BASE_URL"] = "k", url
			return "anthropic/claude-sonnet-4-5"
		}, ", set by ANTHROPIC_BASE_URL"},
		{"profile", func(te *testEnv, url string) string {
			te.env["WORK_KEY"] = "k"
			te.mustRun(ExitOK, "provider", "add", "work", "--provider", "anthropic", "--base-url", url, "--api-key-env", "WORK_KEY")
			return "work/claude-sonnet-4-5"
		}, ", the base URL of profile work"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			te := newTestEnv(t)
			te.env["REIN_SANDBOX"] = "off"
			te.customize = func(a *App) { a.Models = nil }
			url := closedURL(t)
			model := tt.setup(te, url)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stderr := &cancelOn{want: "↻", cancel: cancel}
			var stdout bytes.Buffer
			a := te.app(&stdout, nil)
			a.Stderr = stderr
			a.Run(ctx, []string{"run", "--model", model, "hello"})
			errs := stderr.String()
			first, _, _ := strings.Cut(errs[strings.Index(errs, "↻")+len("↻"):], "\n")
			if !strings.Contains(errs, "↻") || !strings.Contains(first, "cannot reach "+url+tt.want) || !strings.Contains(first, "retrying in") {
				t.Errorf("the first retry line does not name %s and what set it:\n%s", url, errs)
			}
		})
	}
}

// CLI-4, PROV-7 on a fake clock: the first retry is announced before any
// backoff is waited, naming the endpoint; the retries go on within the
// budget, and the error that ends them names it too.
func TestNamingRetriesFakeClock_CLI4(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refused := llm.ProviderFunc(func(context.Context, *llm.Request) iter.Seq2[llm.Delta, error] {
			return func(yield func(llm.Delta, error) bool) {
				yield(llm.Delta{}, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
			}
		})
		p := llm.Retrying(naming(refused, "http://127.0.0.1:1, set by ANTHROPIC_BASE_URL"), llm.RetryPolicy{})
		start := time.Now()
		var first time.Duration = -1
		retries := 0
		var last error
		for d, err := range p.Stream(context.Background(), &llm.Request{Model: "m"}) {
			if err != nil {
				last = err
				break
			}
			if d.Kind == llm.DeltaRetry {
				if retries == 0 {
					first = time.Since(start)
					if !strings.Contains(d.Retry.Err.Error(), "cannot reach http://127.0.0.1:1, set by ANTHROPIC_BASE_URL") {
						t.Errorf("first retry: %v", d.Retry.Err)
					}
				}
				retries++
			}
		}
		if first != 0 {
			t.Errorf("the first retry was announced after %v of the fake clock, want at once", first)
		}
		if retries < 2 || last == nil || !strings.Contains(last.Error(), "cannot reach http://127.0.0.1:1") {
			t.Errorf("%d retries; final error %v", retries, last)
		}
	})
}
