package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// COMPAT-1: --input-format stream-json runs two user messages (one a plain
// string, one a list of blocks) in one session: two results, the second
// run seeing the first exchange; the SDK's initialize request is answered.
func TestCCStreamInput_COMPAT1(t *testing.T) {
	te := newTestEnv(t)
	te.stdin = `{"type":"control_request","request_id":"r1","request":{"subtype":"initialize"}}` + "\n" +
		`{"type":"user","session_id":"","message":{"role":"user","content":"first question"},"parent_tool_use_id":null}` + "\n\n" +
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"second question"}]}}` + "\n" +
		`{"type":"control_request","request_id":"r2","request":{"subtype":"interrupt"}}` + "\n"
	s := te.script("m", llmtest.Reply{Text: "first answer"}, llmtest.Reply{Text: "second answer"})
	out, errs := te.mustRun(ExitOK, "run", "--model", "scripted/m", "-p", "--output-format", "stream-json",
		"--input-format", "stream-json", "--verbose")
	if errs != "" {
		t.Errorf("stderr: %s", errs)
	}
	var control, rest []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(l, `{"type":"control_response"`) {
			control = append(control, l)
		} else {
			rest = append(rest, l)
		}
	}
	want := []string{
		`{"type":"control_response","response":{"subtype":"success","request_id":"r1","response":{}}}`,
		`{"type":"control_response","response":{"subtype":"error","request_id":"r2","error":"rein does not support the control request \"interrupt\""}}`,
	}
	if strings.Join(control, "\n") != strings.Join(want, "\n") {
		t.Errorf("control responses:\n%s\nwant:\n%s", strings.Join(control, "\n"), strings.Join(want, "\n"))
	}
	var results []wantResult
	for _, l := range rest {
		if strings.HasPrefix(l, `{"type":"result"`) {
			results = append(results, checkResult(t, l))
		}
	}
	if len(results) != 2 || *results[0].Result != "first answer" || *results[1].Result != "second answer" ||
		results[0].SessionID != results[1].SessionID {
		t.Fatalf("results: %+v\n%s", results, out)
	}
	if n := strings.Count(out, `"subtype":"init"`); n != 1 {
		t.Errorf("%d system/init lines, want 1", n)
	}
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls", len(reqs))
	}
	var seen []string
	for _, m := range reqs[1].Messages {
		seen = append(seen, m.TextOf())
	}
	if got := strings.Join(seen, "|"); !strings.HasPrefix(got, "first question|first answer|second question") {
		t.Errorf("the second run saw %q", got)
	}
}

// COMPAT-1: a bad line of stream-json input stops the input with a
// usage error naming the line; the messages before it ran.
func TestCCStreamInputErrors_COMPAT1(t *testing.T) {
	tests := []struct {
		stdin, want string
		runs        int
	}{
		{`{"type":"user","message":{"role":"user","content":"ok"}}` + "\nnot json\n", "line 2: not a stream-json input line", 1},
		{`{"type":"assistant","message":{}}`, `line 1: type "assistant"`, 0},
		{`{"type":"user","message":{"role":"assistant","content":"x"}}`, `message.role "assistant"`, 0},
		{`{"type":"user","message":{"role":"user","content":""}}`, "message.content is empty", 0},
		{`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"x"}]}}`, `block type "tool_result"`, 0},
		{`{"type":"user","message":{"role":"user","content":"x"},"extra":1}`, `unknown field "extra"`, 0},
		{"", "no user message on stdin", 0},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			te := newTestEnv(t)
			te.stdin = tt.stdin
			s := te.script("m", llmtest.Reply{Text: "a"}, llmtest.Reply{Text: "b"})
			_, errs := te.mustRun(ExitUsage, "run", "--model", "scripted/m", "--output-format", "stream-json", "--input-format", "stream-json")
			if !strings.Contains(errs, tt.want) {
				t.Errorf("stderr %q lacks %q", errs, tt.want)
			}
			if n := len(s.Requests()); n != tt.runs {
				t.Errorf("%d model calls, want %d", n, tt.runs)
			}
		})
	}
	te := newTestEnv(t)
	te.script("m")
	_, errs := te.mustRun(ExitUsage, "run", "--model", "scripted/m", "--output-format", "stream-json", "--input-format", "stream-json", "a prompt")
	if !strings.Contains(errs, "reads the prompts from stdin") {
		t.Errorf("a prompt argument with stream-json input: %s", errs)
	}
}

// COMPAT-1: parseCCInput reads each documented form; images are decoded
// and checked.
func TestParseCCInput_COMPAT1(t *testing.T) {
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG fake"))
	tests := []struct {
		line    string
		text    string
		images  int
		control string
		err     string
	}{
		{line: `{"type":"user","message":{"role":"user","content":"hi"}}`, text: "hi"},
		{line: `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}`, text: "ab"},
		{line: `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"see"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + png + `"}}]}}`, text: "see", images: 1},
		{line: `{"type":"control_request","request_id":"1","request":{"subtype":"set_model","model":"x"}}`, control: "set_model"},
		{line: `{"type":"control_request","request":{"subtype":"initialize"}}`, err: "want request_id"},
		{line: `{"type":"user","message":{"role":"user","content":[{"type":"image","source":{"type":"url","url":"http://127.0.0.1/x.png"}}]}}`, err: `"type":"base64"`},
		{line: `{"type":"user","message":{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/svg+xml","data":"` + png + `"}}]}}`, err: "image/svg+xml"},
		{line: `{"type":"user","message":{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"!!"}}]}}`, err: "not base64"},
		{line: `{"type":"user","message":{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` +
			base64.StdEncoding.EncodeToString(make([]byte, maxCCImage+1)) + `"}}]}}`, err: "want 1 byte to 5 MiB"},
		{line: `{"type":"user","message":{"role":"user","content":42}}`, err: "want a string or a list"},
		{line: `{"type":"user"}`, err: `"message": want`},
		{line: `{"message":{"role":"user","content":"x"}}`, err: `missing "type"`},
		{line: `{"type":"user","message":{"role":"user","content":"x"}} {"type":"user"}`, err: "more than one JSON value"},
		{line: `[]`, err: "not a stream-json input line"},
	}
	for _, tt := range tests {
		name := tt.line
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) {
			in, err := parseCCInput([]byte(tt.line))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.control != "" {
				if in.Subtype != tt.control || in.Message != nil {
					t.Errorf("control %+v", in)
				}
				return
			}
			images := 0
			for _, b := range in.Message.Content {
				if _, ok := b.(*llm.Image); ok {
					images++
				}
			}
			if in.Message.Role != llm.RoleUser || in.Message.TextOf() != tt.text || images != tt.images {
				t.Errorf("message %+v", in.Message)
			}
		})
	}
}

// COMPAT-1: a line longer than Claude Code's 10 MB bound is refused, not
// read whole.
func TestCCInputLineBound_COMPAT1(t *testing.T) {
	line := `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("a", maxCCInputLine) + `"}}`
	err := ccInputs(strings.NewReader(line), &bytes.Buffer{}, func(*llm.Message) error {
		t.Fatal("a message longer than the bound ran")
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "longer than 10 MB") {
		t.Errorf("err %v", err)
	}
}

// FuzzParseCCInput: any line is parsed or refused with an error, never a
// panic; a parsed user message is a user message with content a reader
// sees, and a control request has its id and subtype.
func FuzzParseCCInput(f *testing.F) {
	for _, s := range []string{
		`{"type":"user","message":{"role":"user","content":"hi"}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","media_type":"image/gif","data":"R0lGOA=="}}]}}`,
		`{"type":"control_request","request_id":"1","request":{"subtype":"initialize"}}`,
		`{"type":"user","message":null}`,
		`{"type":"user","message":{"role":"user","content":[null]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"image","source":null}]}}`,
		"\x00", `"`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		in, err := parseCCInput(line)
		if err != nil {
			if in.Message != nil || in.RequestID != "" {
				t.Fatalf("an error with a result: %+v", in)
			}
			if !utf8.ValidString(err.Error()) && utf8.Valid(line) {
				t.Fatalf("error message not UTF-8: %q", err)
			}
			return
		}
		if in.Message == nil {
			if in.RequestID == "" || in.Subtype == "" {
				t.Fatalf("control request without id or subtype: %+v", in)
			}
			if _, err := json.Marshal(controlResponse(in)); err != nil {
				t.Fatal(err)
			}
			return
		}
		if in.Message.Role != llm.RoleUser || in.Message.Empty() {
			t.Fatalf("parsed %q into %+v", line, in.Message)
		}
		for _, b := range in.Message.Content {
			if img, ok := b.(*llm.Image); ok && (len(img.Data) == 0 || len(img.Data) > maxCCImage) {
				t.Fatalf("image of %d bytes", len(img.Data))
			}
		}
	})
}
