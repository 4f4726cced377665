package sdkcheck_test

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"google.golang.org/genai"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/gemini"
)

// geminiKnown lists every difference between rein's reply and the one
// built from google.golang.org/genai's GenerateContentStream, per fixture
// under testdata/streams/gemini; anything else fails TestGeminiStreams.
var geminiKnown = []knownDiff{
	{fixture: "typical-thoughts-text-call", name: "rein makes up an id for a call that came without one",
		ref: "intended: llm/gemini/doc.go (\"call_<responseId>_<n>\")", reconcile: madeUpIDs},
	{fixture: "byte-order-mark", name: "rein makes up an id for a call that came without one",
		ref: "intended: llm/gemini/doc.go (\"call_<responseId>_<n>\")", reconcile: madeUpIDs},
	{fixture: "byte-order-mark", name: "the SDK fails on a byte-order mark before the first event; rein skips it",
		ref: "intended: llm/gemini/prov2_test.go TestPROV2Framing", sdkError: "invalid stream chunk"},
	{fixture: "keep-alive", name: "the SDK fails on a keep-alive event with empty data; rein skips it",
		ref: "intended: llm/gemini/prov2_test.go TestPROV2Framing", sdkError: "unexpected end of JSON input"},
	{fixture: "comments-and-fields", name: "the SDK fails on an SSE comment line; rein skips comments and other fields",
		ref: "intended: llm/gemini/stream_test.go TestEventFraming", sdkError: "invalid stream chunk"},
	{fixture: "data-over-lines", name: "the SDK fails on an event whose data spans several data: lines; rein joins them (the SSE standard)",
		ref: "intended: llm/gemini/stream_test.go TestEventFraming", sdkError: "looking for beginning of value"},
}

func init() {
	geminiKnown = append(geminiKnown, estimatedFor("recitation", "malformed-function-call", "usage-missing")...)
}

// TestGeminiStreams decodes every recorded streamGenerateContent reply with
// rein's adapter and with the SDK (Models.GenerateContentStream, its
// chunks' parts put together in order) and compares the final message.
func TestGeminiStreams(t *testing.T) {
	totals := map[string]int{}
	for _, fx := range loadFixtures(t, "gemini") {
		t.Run(fx.name, func(t *testing.T) {
			url := serveFixture(t, fx)
			req := &llm.Request{Model: geminiModel, Messages: []llm.Message{llm.UserText("hi")}}
			resp, err := runRein(t.Context(), gemini.New(gemini.Config{APIKey: testKey, BaseURL: url}), req)
			if err != nil {
				t.Fatalf("rein: %v", err)
			}
			ref, err := geminiSDKFinal(t, url)
			if sdkFailed(t, fx.name, err, geminiKnown, totals) {
				return
			}
			for k, n := range compareFinals(t, fx.name, reinFinal(resp), ref, geminiKnown) {
				totals[k] += n
			}
		})
	}
	logTotals(t, "gemini", totals)
}

// geminiSDKFinal streams from url with the SDK and puts the chunks
// together as rein's model has them (llm/gemini/doc.go): consecutive
// thought parts are one thinking block, closed by the signature that ends
// it; consecutive text parts one text block, a signature on one a
// text-less thinking block before it; a call a tool use with its
// signature. The counts are the last chunk's (they are cumulative).
func geminiSDKFinal(t *testing.T, url string) (final, error) {
	var f final
	var finish string
	var blocked, calls bool
	open := -1 // the index of the text or thinking block still growing
	for chunk, err := range newGeminiSDK(t, url).Models.GenerateContentStream(t.Context(), geminiModel, genai.Text("hi"), nil) {
		if err != nil {
			return final{}, err
		}
		if f.ID == "" {
			f.ID = chunk.ResponseID
		}
		if chunk.PromptFeedback != nil && chunk.PromptFeedback.BlockReason != "" {
			blocked = true
		}
		if u := chunk.UsageMetadata; u != nil {
			f.Usage = usage{Input: int64(u.PromptTokenCount - u.CachedContentTokenCount), CacheRead: int64(u.CachedContentTokenCount),
				Output: int64(u.CandidatesTokenCount + u.ThoughtsTokenCount), Reasoning: int64(u.ThoughtsTokenCount)}
		}
		if len(chunk.Candidates) == 0 {
			continue
		}
		c := chunk.Candidates[0]
		if c.FinishReason != "" {
			finish = string(c.FinishReason)
		}
		if c.Content == nil {
			continue
		}
		for _, p := range c.Content.Parts {
			sig := ""
			if len(p.ThoughtSignature) > 0 {
				sig = base64.StdEncoding.EncodeToString(p.ThoughtSignature)
			}
			switch {
			case p.FunctionCall != nil:
				calls, open = true, -1
				args, err := json.Marshal(p.FunctionCall.Args)
				if err != nil {
					t.Fatal(err)
				}
				if len(p.FunctionCall.Args) == 0 {
					args = []byte("{}")
				}
				f.Blocks = append(f.Blocks, block{Kind: "tool_use", ID: p.FunctionCall.ID, Name: p.FunctionCall.Name,
					Input: canonicalJSON(args), Signature: sig})
			case p.Thought:
				if open < 0 || f.Blocks[open].Kind != "thinking" {
					f.Blocks = append(f.Blocks, block{Kind: "thinking"})
					open = len(f.Blocks) - 1
				}
				f.Blocks[open].Text += p.Text
				if sig != "" {
					f.Blocks[open].Signature, open = sig, -1
				}
			case p.Text != "" || sig != "":
				if p.Text != "" {
					if open < 0 || f.Blocks[open].Kind != "text" {
						f.Blocks = append(f.Blocks, block{Kind: "text"})
						open = len(f.Blocks) - 1
					}
					f.Blocks[open].Text += p.Text
				}
				if sig != "" {
					th := block{Kind: "thinking", Signature: sig}
					if open >= 0 && f.Blocks[open].Kind == "text" {
						f.Blocks = append(f.Blocks[:open], th, f.Blocks[open])
					} else {
						f.Blocks = append(f.Blocks, th)
					}
					open = -1
				}
			}
		}
	}
	f.Stop = geminiStop(finish, blocked, calls)
	return f, nil
}

// geminiStop maps a finish reason onto rein's (llm/gemini/doc.go).
func geminiStop(finish string, blocked, calls bool) string {
	switch finish {
	case "STOP":
		if calls {
			return string(llm.StopToolUse)
		}
		return string(llm.StopEndTurn)
	case "MAX_TOKENS":
		return string(llm.StopMaxTokens)
	case "SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII":
		return string(llm.StopRefusal)
	case "":
		if blocked {
			return string(llm.StopRefusal)
		}
		return ""
	}
	return string(llm.StopUnknownOther)
}
