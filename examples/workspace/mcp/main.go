// Command mcp is the glossary MCP server of rein's workspace example
// (examples/workspace/.rein/mcp.yaml starts it): a stdio server with two
// deterministic tools over a fixed glossary of lighthouse terms.
//
//   - define {term}: the definition of one term; an unknown term is an error
//     result that lists the terms there are.
//   - list_terms {}: the terms, one a line, sorted.
//
// It speaks MCP on its stdin and stdout through the official Go SDK and
// needs nothing else: no network, no files.
package main

import (
	"context"
	"fmt"
	"log"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// glossary maps each term, lower case, to its definition.
var glossary = map[string]string{
	"fresnel lens": "a lens of concentric glass rings and prisms that bends the lamp's light into one beam; " +
		"a first-order lens, the largest, stands taller than a keeper.",
	"lamp room": "the glazed room at the top of the tower that holds the lamp and the lens.",
	"night book": "the log the keeper writes during the night: each winding of the clockwork, the weather, " +
		"the ships seen.",
	"clockwork": "the weight-driven mechanism that turns the lens; it runs about four hours on one winding.",
}

type defineInput struct {
	Term string `json:"term" jsonschema:"the term to define, as the page writes it; case does not matter"`
}

type listInput struct{}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "glossary", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "define",
		Description: "Defines one term of the Cape Wren lighthouse glossary. Use it for the terms a handbook page writes in bold.",
	}, define)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "list_terms",
		Description: "Lists the terms of the Cape Wren lighthouse glossary.",
	}, listTerms)
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatalf("glossary: %v", err)
	}
}

func define(_ context.Context, _ *mcp.CallToolRequest, in defineInput) (*mcp.CallToolResult, any, error) {
	term := strings.ToLower(strings.Join(strings.Fields(in.Term), " "))
	def, ok := glossary[term]
	if !ok {
		msg := fmt.Sprintf("%q is not in the glossary; its terms are: %s", in.Term, strings.Join(terms(), ", "))
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, nil, nil
	}
	return text(term + ": " + def), nil, nil
}

func listTerms(context.Context, *mcp.CallToolRequest, listInput) (*mcp.CallToolResult, any, error) {
	return text(strings.Join(terms(), "\n")), nil, nil
}

func terms() []string { return slices.Sorted(maps.Keys(glossary)) }

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
