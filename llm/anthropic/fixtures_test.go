package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
)

// TestRecordedFixtures runs every recorded reply — the files of
// testdata/streams, in the API's documented wire format, and the bodies of
// streamCases — and checks that none loses content: every content block
// type the reply carries has a block in the final message (text aside,
// whose empty blocks are left out by design). It logs how many lose
// content, the figure issue 23 reports before and after opaque blocks.
func TestRecordedFixtures(t *testing.T) {
	type fixture struct{ name, ct, body string }
	var fixtures []fixture
	files, _ := filepath.Glob(filepath.Join("testdata", "streams", "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ct := "text/event-stream"
		if strings.HasSuffix(f, ".json") {
			ct = "application/json"
		}
		fixtures = append(fixtures, fixture{filepath.Base(f), ct, string(b)})
	}
	for _, c := range streamCases() {
		if c.kind == 0 {
			fixtures = append(fixtures, fixture{"streamCases/" + c.name, "text/event-stream", c.body})
		}
	}
	lost := 0
	for _, f := range fixtures {
		resp, err := llm.Complete(context.Background(), serve(t, f.ct, f.body), userReq("hi"))
		if err != nil {
			t.Errorf("%s: %v", f.name, err)
			continue
		}
		kept := map[string]bool{"text": true}
		for _, b := range resp.Message.Content {
			kept[blockType(b)] = true
		}
		var missing []string
		for _, typ := range sentTypes(f.body, f.ct == "application/json") {
			if !kept[typ] && !slices.Contains(missing, typ) {
				missing = append(missing, typ)
			}
		}
		if len(missing) > 0 {
			lost++
			t.Errorf("%s loses %v", f.name, missing)
		}
	}
	t.Logf("%d of %d recorded fixtures lose content", lost, len(fixtures))
}

// blockType names a final block by the API's type for it; a block kind
// without an API name (an opaque one) by its Type field.
func blockType(b llm.Block) string {
	switch b := b.(type) {
	case *llm.Text:
		return "text"
	case *llm.Thinking:
		if b.Redacted {
			return "redacted_thinking"
		}
		return "thinking"
	case *llm.ToolUse:
		return "tool_use"
	}
	if v := reflect.ValueOf(b).Elem(); v.Kind() == reflect.Struct {
		if f := v.FieldByName("Type"); f.IsValid() && f.Kind() == reflect.String {
			return f.String()
		}
	}
	return fmt.Sprintf("%T", b)
}

// sentTypes returns the types of the content blocks a reply carries, in
// order: content_block_start's and message_start's, or a whole message's.
func sentTypes(body string, whole bool) []string {
	type blocks struct {
		Content []struct {
			Type string `json:"type"`
		} `json:"content"`
	}
	var out []string
	if whole {
		var m blocks
		_ = json.Unmarshal([]byte(strings.TrimPrefix(body, "\xEF\xBB\xBF")), &m)
		for _, c := range m.Content {
			out = append(out, c.Type)
		}
		return out
	}
	for _, line := range strings.Split(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type         string `json:"type"`
			Message      blocks `json:"message"`
			ContentBlock struct {
				Type string `json:"type"`
			} `json:"content_block"`
		}
		if json.Unmarshal([]byte(data), &ev) != nil {
			continue
		}
		switch ev.Type {
		case "message_start":
			for _, c := range ev.Message.Content {
				out = append(out, c.Type)
			}
		case "content_block_start":
			out = append(out, ev.ContentBlock.Type)
		}
	}
	return out
}
