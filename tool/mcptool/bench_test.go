package mcptool

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/tool"
)

// BenchmarkScreen measures screening a server's tool list at connect
// (SPEC MCP-2): every description and schema text through the document
// rules. Each iteration screens texts never seen before (the scanner
// remembers texts it scanned), so this is the cost of a first connect.
//
//	go test ./tool/mcptool/ -run XXX -bench Screen -benchmem
func BenchmarkScreen(b *testing.B) {
	for _, n := range []int{100, 3000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			base := manyTools("big", n, 250)
			i := 0
			for b.Loop() {
				b.StopTimer()
				tools := make([]*Tool, len(base))
				for j, t := range base {
					c := *t
					c.spec.Description = fmt.Sprintf("%s (v%d)", t.spec.Description, i)
					tools[j] = &c
				}
				i++
				b.StartTimer()
				if s := screen("big", "Use the tools by id.", tools, testScreen); s.Flagged() {
					b.Fatal(s.Explain(1))
				}
			}
		})
	}
}

// BenchmarkRequestTools measures what the MCP tools of a 3,000-tool server
// cost each request: listing the request's tool specs from the set, and
// the bytes of MCP definitions in it (reported as mcp-bytes/request) —
// "all" is every tool up front as before MCP-2, "deferred" the budget
// with 5 tools loaded.
//
//	go test ./tool/mcptool/ -run XXX -bench RequestTools -benchmem
func BenchmarkRequestTools(b *testing.B) {
	tools := asTools(manyTools("big", 3000, 250))
	b.Run("all", func(b *testing.B) {
		set, err := tool.NewSet(tool.OriginMCP, tools...)
		if err != nil {
			b.Fatal(err)
		}
		benchSpecs(b, set)
	})
	b.Run("deferred", func(b *testing.B) {
		set, err := tool.NewSet(tool.OriginMCP)
		if err != nil {
			b.Fatal(err)
		}
		if err := set.AddDeferred(tool.OriginMCP, "", tools...); err != nil {
			b.Fatal(err)
		}
		s := NewSearch(tools, Budget{}, set.Load)
		if err := set.Add(tool.OriginMCP, s.Tool()); err != nil {
			b.Fatal(err)
		}
		names := make([]string, 5)
		for i := range names {
			names[i] = tools[i*500].Spec().Name
		}
		if r := run(b, s.Tool(), `{"query":"select:`+strings.Join(names, ",")+`"}`); r.IsError {
			b.Fatal(r.TextOf())
		}
		benchSpecs(b, set)
	})
}

func benchSpecs(b *testing.B, set *tool.Set) {
	for b.Loop() {
		set.Specs()
	}
	bytes := 0
	for _, s := range set.Specs() {
		if strings.HasPrefix(s.Name, "mcp__") {
			bytes += SpecSize(s)
		}
	}
	b.ReportMetric(float64(bytes), "mcp-bytes/request")
}

// BenchmarkSearch measures one keyword search over 3,000 deferred tools.
//
//	go test ./tool/mcptool/ -run XXX -bench Search -benchmem
func BenchmarkSearch(b *testing.B) {
	tools := asTools(manyTools("big", 3000, 250))
	s := NewSearch(tools, Budget{MaxTools: 1 << 20, MaxBytes: 1 << 30}, func(...string) error { return nil })
	for b.Loop() {
		s.match("record 1234 inventory", defaultResults)
	}
}
