package compact

import (
	"testing"

	"github.com/reinhq/rein/llm"
)

// CTX-5: CacheMeter counts what a prompt cache serves and where a request
// breaks the cached prefix.
func TestCacheMeterCTX5(t *testing.T) {
	h := (&hist{}).user("go").tool("bash", `{"command":"ls"}`, lines(50, 40), false).tool("bash", `{"command":"ls -l"}`, lines(60, 40), false)
	base := h.msgs
	snipped, n := snipOutputs(base, 0, 3, &Config{SnipHeadLines: 2, SnipTailLines: 2, SnipMinChars: 100})
	if n != 1 {
		t.Fatalf("snipped %d outputs, want 1", n)
	}
	req := func(system string, msgs []llm.Message) *llm.Request {
		return &llm.Request{System: system, Messages: msgs}
	}
	summaryReq := req("sys", append(base[:3:3], llm.UserText(SummaryInstruction)))
	cases := []struct {
		name      string
		reqs      []*llm.Request
		wantBreak []PrefixBreak
	}{
		{name: "append only", reqs: []*llm.Request{req("sys", base[:1]), req("sys", base[:3]), req("sys", base)}},
		{name: "the same request again", reqs: []*llm.Request{req("sys", base), req("sys", base)}},
		{name: "a snipped output breaks at its block", reqs: []*llm.Request{req("sys", base), req("sys", snipped)},
			wantBreak: []PrefixBreak{{Request: 1, Segment: 2 + 1 + 2, Of: 2 + 1 + 6, Message: 2, Block: 0}}},
		{name: "a changed system prompt breaks before the messages", reqs: []*llm.Request{req("sys", base), req("sys2", base)},
			wantBreak: []PrefixBreak{{Request: 1, Segment: 0, Of: 9, Message: -1, Block: -1}}},
		{name: "a summary request is a branch, not a break", reqs: []*llm.Request{req("sys", base), summaryReq, req("sys", append(base[:len(base):len(base)], llm.UserText("more")))}},
		{name: "the request after a summary breaks against the conversation", reqs: []*llm.Request{req("sys", base), summaryReq, req("sys", withSummary("S", base[3:]))},
			wantBreak: []PrefixBreak{{Request: 2, Segment: 2, Of: 9, Message: 0, Block: 0}}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			var m CacheMeter
			for _, r := range tt.reqs {
				m.Add(r)
			}
			if len(m.Breaks) != len(tt.wantBreak) {
				t.Fatalf("breaks %+v, want %+v", m.Breaks, tt.wantBreak)
			}
			for i := range m.Breaks {
				if m.Breaks[i] != tt.wantBreak[i] {
					t.Errorf("break %+v, want %+v", m.Breaks[i], tt.wantBreak[i])
				}
			}
			if m.Requests != len(tt.reqs) || m.Uncached == 0 || m.Bytes == 0 {
				t.Errorf("meter %+v", m)
			}
			if len(tt.wantBreak) == 0 && tt.name != "a summary request is a branch, not a break" {
				// Without a break, every request after the first is read from
				// the cache but for what it appends.
				last := CacheMeter{}
				last.Add(tt.reqs[len(tt.reqs)-1])
				if m.CacheRead == 0 || m.Uncached != last.Uncached {
					t.Errorf("read %d, uncached %d; want the last request's %d uncached in all", m.CacheRead, m.Uncached, last.Uncached)
				}
			}
		})
	}
}

// CTX-5: the rewrite log names the first block a prompt cache no longer
// serves, comparing blocks as the cache does.
func TestFirstRewriteCTX5(t *testing.T) {
	h := (&hist{}).user("go").tool("bash", `{}`, lines(50, 40), false).tool("bash", `{}`, lines(50, 40), false)
	base := h.msgs
	snipped, _ := snipOutputs(base, 3, 5, &Config{SnipHeadLines: 2, SnipTailLines: 2, SnipMinChars: 100})
	sum1 := withSummary("S", base[3:])
	sum2 := withSummary("S", base[3:]) // a new message value, the same bytes
	sum3 := withSummary("T", base[3:])
	copied := append([]llm.Message(nil), base...)
	copied[2] = llm.Message{Role: llm.RoleUser, Content: append([]llm.Block(nil), base[2].Content...)}
	roled := append([]llm.Message(nil), base...)
	roled[1] = llm.Message{Role: llm.RoleUser, Content: base[1].Content}
	cases := []struct {
		name     string
		old, new []llm.Message
		msg, blk int
	}{
		{"append only", base[:3], base, -1, -1},
		{"identical", base, base, -1, -1},
		{"snip of the second output", base, snipped, 4, 0},
		{"summary", base, sum1, 0, 0},
		{"the same summary written again", sum1, sum2, -1, -1},
		{"a different summary", sum1, sum3, 0, 0},
		{"copied blocks are no rewrite", base, copied, -1, -1},
		{"a changed role", base, roled, 1, 0},
		{"fewer messages", base, base[:2], 2, 0},
		{"a block added inside a message", base[:1], []llm.Message{{Role: llm.RoleUser, Content: append(base[0].Content[:1:1], &llm.Text{Text: "x"})}}, 0, 1},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			if msg, blk := firstRewrite(tt.old, tt.new); msg != tt.msg || blk != tt.blk {
				t.Errorf("firstRewrite = %d, %d; want %d, %d", msg, blk, tt.msg, tt.blk)
			}
		})
	}
}
