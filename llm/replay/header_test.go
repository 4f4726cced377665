package replay

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// CLI-1: the header says whether the recording ran with the user's own
// configuration; ReadHeader reads it without the rest of the cassette.
func TestHeaderUserConfig_CLI1(t *testing.T) {
	for _, user := range []bool{false, true} {
		var buf bytes.Buffer
		rec := NewRecorder(llmtest.NewScripted(llmtest.Reply{Text: "hi"}), &buf, RecorderOptions{Now: fixedNow, UserConfig: user})
		for _, err := range rec.Stream(context.Background(), &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hello")}}) {
			if err != nil {
				t.Fatal(err)
			}
		}
		h, err := ReadHeader(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if h.UserConfig != user {
			t.Errorf("recorded with UserConfig %v, header says %v", user, h.UserConfig)
		}
		if got := strings.Contains(buf.String(), "user_config"); got != user {
			t.Errorf("UserConfig %v: the header mentions user_config: %v", user, got)
		}
	}
	for _, bad := range []string{"", "{", `{"version":9}` + "\n", "not json\n{}"} {
		if _, err := ReadHeader(strings.NewReader(bad)); err == nil {
			t.Errorf("ReadHeader(%q): no error", bad)
		}
	}
}
