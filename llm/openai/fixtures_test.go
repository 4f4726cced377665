package openai_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/openai"
)

// TestRecordedFixtures runs every recorded Responses reply — the files of
// testdata/responses, in the API's documented wire format, and the bodies of
// responsesStreamCases — and checks that none loses content: every output
// item type the reply carries has a block in the final message. It logs how
// many lose content, the figure issue 23 reports before and after opaque
// blocks.
func TestRecordedFixtures(t *testing.T) {
	type fixture struct{ name, ct, body string }
	var fixtures []fixture
	files, _ := filepath.Glob(filepath.Join("testdata", "responses", "*"))
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
	for _, c := range responsesStreamCases() {
		fixtures = append(fixtures, fixture{"responsesStreamCases/" + c.name, c.contentType, c.body})
	}
	lost := 0
	for _, f := range fixtures {
		ct := f.ct
		if ct == "" {
			ct = "text/event-stream"
		}
		rs := newRaw(t, 200, ct, f.body)
		_, resp, err := run(openai.NewResponses(openai.Config{APIKey: key, BaseURL: rs.URL}), hi("gpt-5"))
		if err != nil {
			t.Errorf("%s: %v", f.name, err)
			continue
		}
		kept := map[string]bool{"message": true}
		for _, b := range resp.Message.Content {
			kept[itemType(b)] = true
		}
		var missing []string
		for _, typ := range sentItems(f.body, ct == "application/json") {
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

// itemType names a final block by the API's output item type for it; a
// block kind without one (an opaque block) by its Type field.
func itemType(b llm.Block) string {
	switch b.(type) {
	case *llm.Text:
		return "message"
	case *llm.Thinking:
		return "reasoning"
	case *llm.ToolUse:
		return "function_call"
	}
	if v := reflect.ValueOf(b).Elem(); v.Kind() == reflect.Struct {
		if f := v.FieldByName("Type"); f.IsValid() && f.Kind() == reflect.String {
			return f.String()
		}
	}
	return fmt.Sprintf("%T", b)
}

// sentItems returns the types of the output items a reply carries: the
// items of output_item events and of the final response's output.
func sentItems(body string, whole bool) []string {
	type item struct {
		Type string `json:"type"`
	}
	type response struct {
		Output []item `json:"output"`
	}
	var out []string
	if whole {
		var r response
		_ = json.Unmarshal([]byte(body), &r)
		for _, it := range r.Output {
			out = append(out, it.Type)
		}
		return out
	}
	for _, line := range strings.Split(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type     string    `json:"type"`
			Item     *item     `json:"item"`
			Response *response `json:"response"`
		}
		if json.Unmarshal([]byte(data), &ev) != nil {
			continue
		}
		if ev.Item != nil && ev.Item.Type != "" {
			out = append(out, ev.Item.Type)
		}
		if ev.Response != nil {
			for _, it := range ev.Response.Output {
				out = append(out, it.Type)
			}
		}
	}
	return out
}
