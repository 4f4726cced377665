// Package tool is the thin interface every tool of rein implements, whatever
// its origin: built-in, workspace action, skill, MCP server or sub-agent
// (SPEC TOOL-1, TOOL-2).
//
// A [Tool] describes itself with an [llm.ToolSpec] (name, description, JSON
// Schema of its input) and runs a [Call]. Failures the model should see are a
// [Result] with IsError set; a Go error from Run is a failure of the tool
// itself, which the run loop reports to the model as an error result too,
// and the run goes on. [Meta] says whether a tool is read-only, destructive
// or safe to run in parallel; [New] builds a tool from a typed Go function
// and infers its schema.
// A [Set] is the registry the run loop dispatches from; it validates every
// input against the tool's schema before the tool sees it.
package tool
