package sdkcheck_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/llm"
)

// final is a finished reply in terms both sides can be put in: rein's
// llm.Response, and the message the SDK's own accumulator built from the
// same stream.
type final struct {
	ID     string
	Blocks []block
	// Stop is in rein's vocabulary (llm.StopReason); the SDK's reason is
	// mapped by the vendor's documented meaning.
	Stop  string
	Usage usage
}

// block is one content block. Kind is "text", "thinking",
// "redacted_thinking", "tool_use", or the vendor's type of a block rein has
// no kind for ("server_tool_use", "web_search_call", …), which rein keeps
// whole as an llm.Opaque block: Input is then the block's JSON.
type block struct {
	Kind      string
	Text      string
	Signature string
	ID        string
	Name      string
	Input     string // canonical JSON
}

// usage holds the counts as rein reports them: InputTokens without the
// cached part.
type usage struct {
	Input, Output, CacheRead, CacheWrite, Reasoning int64
	// Estimated: rein found no counts in the stream and estimated them.
	Estimated bool
}

// reinFinal is rein's reply as a final.
func reinFinal(r *llm.Response) final {
	f := final{ID: r.ID, Stop: string(r.StopReason), Usage: usage{
		Input: r.Usage.InputTokens, Output: r.Usage.OutputTokens, CacheRead: r.Usage.CacheReadTokens,
		CacheWrite: r.Usage.CacheWriteTokens, Reasoning: r.Usage.ReasoningTokens, Estimated: r.Usage.Estimated}}
	for _, b := range r.Message.Content {
		switch b := b.(type) {
		case *llm.Text:
			f.Blocks = append(f.Blocks, block{Kind: "text", Text: b.Text})
		case *llm.Thinking:
			k := "thinking"
			if b.Redacted {
				k = "redacted_thinking"
			}
			f.Blocks = append(f.Blocks, block{Kind: k, Text: b.Text, Signature: b.Signature, ID: b.ID})
		case *llm.ToolUse:
			f.Blocks = append(f.Blocks, block{Kind: "tool_use", ID: b.ID, Name: b.Name, Input: canonicalJSON(b.Input), Signature: b.Signature})
		case *llm.Opaque:
			// A vendor block rein does not model, kept whole: compared by
			// its type and its JSON with the SDK's block.
			f.Blocks = append(f.Blocks, block{Kind: b.Type, Input: canonicalJSON(b.Raw)})
		default:
			// A kind this check does not know yet: it shows up as a
			// difference until it is mapped here.
			f.Blocks = append(f.Blocks, block{Kind: fmt.Sprintf("%T", b)})
		}
	}
	return f
}

// runRein streams req through p and returns the final reply.
func runRein(ctx context.Context, p llm.Provider, req *llm.Request) (*llm.Response, error) {
	var resp *llm.Response
	for d, err := range p.Stream(ctx, req) {
		if err != nil {
			return nil, err
		}
		if d.Kind == llm.DeltaDone {
			resp = d.Response
		}
	}
	if resp == nil {
		return nil, fmt.Errorf("stream ended without a reply")
	}
	return resp, nil
}

// fixture is a stream under testdata/streams: the bytes a vendor sent,
// served as they are. Its file starts with "# " lines naming where it comes
// from and, as "# content-type: …", the type it is served as (an event
// stream when none).
type fixture struct {
	name        string // the file's name without its extension
	contentType string
	body        []byte
}

// loadFixtures reads testdata/streams/<api>/*.txt.
func loadFixtures(t *testing.T, api string) []fixture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "streams", api, "*.txt"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures for %s (%v)", api, err)
	}
	var out []fixture
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f := fixture{name: strings.TrimSuffix(filepath.Base(p), ".txt"), contentType: "text/event-stream"}
		for len(raw) > 0 && raw[0] == '#' {
			line, rest, _ := strings.Cut(string(raw), "\n")
			if ct, ok := strings.CutPrefix(line, "# content-type: "); ok {
				f.contentType = strings.TrimSpace(ct)
			}
			raw = []byte(rest)
		}
		// "\xEF\xBB\xBF" may start a body (a byte-order mark): it is written
		// in the file as the text \ufeff so that editors keep it.
		f.body = []byte(strings.ReplaceAll(string(raw), `\ufeff`, "\xEF\xBB\xBF"))
		out = append(out, f)
	}
	return out
}

// serveFixture serves f on 127.0.0.1 for every request.
func serveFixture(t *testing.T, f fixture) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", f.contentType)
		_, _ = w.Write(f.body)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// knownDiff is a documented difference between rein's reply and the SDK's
// for one fixture: reconcile rewrites the two finals so the difference
// goes, and returns how many places it rewrote. A known difference that
// rewrites nothing fails the test (it is gone: remove it from the list), so
// the list stays exact and any new difference fails.
type knownDiff struct {
	fixture string
	name    string
	// ref says why, and where the work to remove it is (an issue, a branch).
	ref       string
	reconcile func(rein, sdk *final) int
	// sdkError, when set, is part of the error the SDK fails the fixture
	// with; there is then nothing of the SDK's to compare.
	sdkError string
}

// estimatedFor lists the known difference "rein estimated the usage" for
// each of fixtures, streams that carried no counts.
func estimatedFor(fixtures ...string) []knownDiff {
	var out []knownDiff
	for _, fx := range fixtures {
		out = append(out, knownDiff{fixture: fx, name: "rein estimates usage the stream did not report; the SDK reports zero",
			ref: "intended: a reply without counts is estimated and marked so, never free", reconcile: estimatedUsage})
	}
	return out
}

// sdkFailed handles an error of the SDK on fixture fx: it must be a known
// difference of the fixture (then it is logged and counted, and true is
// returned: there is nothing to compare); any other fails the test. A
// listed error that did not happen fails it too.
func sdkFailed(t *testing.T, fx string, err error, known []knownDiff, totals map[string]int) bool {
	t.Helper()
	for _, k := range known {
		if k.fixture != fx || k.sdkError == "" {
			continue
		}
		if err == nil {
			t.Errorf("known difference %q no longer seen: the SDK read the stream; remove it from the list", k.name)
			return false
		}
		if !strings.Contains(err.Error(), k.sdkError) {
			t.Fatalf("SDK: %v, want the known error %q", err, k.sdkError)
		}
		t.Logf("known difference %q ×1 (%s): %v", k.name, k.ref, err)
		totals[k.name]++
		return true
	}
	if err != nil {
		t.Fatalf("SDK: %v", err)
	}
	return false
}

// compareFinals compares rein's final with the SDK's for fixture fx, after
// the known differences listed for it; every known difference is logged
// with its count. It returns the count of each known difference applied.
func compareFinals(t *testing.T, fx string, rein, sdk final, known []knownDiff) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, k := range known {
		if k.fixture != fx || k.sdkError != "" {
			continue
		}
		n := k.reconcile(&rein, &sdk)
		if n == 0 {
			t.Errorf("known difference %q no longer seen: remove it from the list", k.name)
			continue
		}
		counts[k.name] += n
		t.Logf("known difference %q ×%d (%s)", k.name, n, k.ref)
	}
	if diff := cmp.Diff(sdk, rein); diff != "" {
		t.Errorf("rein's reply differs from the SDK's (-sdk +rein):\n%s", diff)
	}
	return counts
}

// logTotals reports how often each known difference was seen over every
// fixture of an API.
func logTotals(t *testing.T, api string, totals map[string]int) {
	t.Helper()
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range totals {
			if !yield(k) {
				return
			}
		}
	})
	sum := 0
	for _, n := range names {
		sum += totals[n]
		t.Logf("%s: known difference %q seen %d time(s)", api, n, totals[n])
	}
	t.Logf("%s: %d known difference(s) of %d kind(s)", api, sum, len(names))
}

// dropReinBlocks removes rein's blocks of a kind the SDK does not know.
func dropReinBlocks(kind string) func(rein, sdk *final) int {
	return func(rein, _ *final) int {
		n := 0
		rein.Blocks = slices.DeleteFunc(rein.Blocks, func(b block) bool {
			if b.Kind == kind {
				n++
				return true
			}
			return false
		})
		return n
	}
}

// estimatedUsage reconciles usage rein estimated where the stream had
// none: the SDK must have seen no counts at all.
func estimatedUsage(rein, sdk *final) int {
	if !rein.Usage.Estimated || sdk.Usage != (usage{}) || rein.Usage.Input <= 0 {
		return 0
	}
	rein.Usage = usage{}
	return 1
}
