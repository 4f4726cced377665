package builtin

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
)

// CTX-5: an output above the cap is shown as a ~2 KB head-and-tail preview
// with the path of the file holding all of it; one under the cap is whole.
func TestBashLargeOutputPreviewCTX5(t *testing.T) {
	c := newBash(t, BashOptions{})
	r := c.run(context.Background(), "seq 1 20000") // 108,894 bytes
	text := r.TextOf()
	if len(text) > BashPreviewChars+400 {
		t.Errorf("the preview is %d bytes, want about %d", len(text), BashPreviewChars)
	}
	if !strings.HasPrefix(text, "1\n2\n") || !strings.HasSuffix(text, "19999\n20000") {
		t.Errorf("preview lacks the head or the tail:\n%s", text)
	}
	m := regexp.MustCompile(`is in (\S+): read it`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no path in the preview:\n%s", text)
	}
	if data, err := os.ReadFile(m[1]); err != nil || len(data) != 108_894 {
		t.Errorf("saved output: %d bytes, %v", len(data), err)
	}
	small := c.run(context.Background(), "seq 1 4000") // 18,893 bytes, under the cap
	if s := small.TextOf(); len(s) < 18_000 {
		t.Errorf("an output under the cap was cut to %d bytes", len(s))
	}
}
