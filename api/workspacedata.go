package api

import "time"

// Catalog is the body of GET /workspaces/{id}/catalog: what a run in the
// workspace may use (SPEC API-1) — the definitions that apply there, the
// MCP servers, the models.
type Catalog struct {
	Trusted bool   `json:"trusted" doc:"The operator trusted the workspace (SPEC PERM-5): its own agents, skills, actions, commands and MCP servers apply. Untrusted, only rein's and the operator's do; the workspace's MCP servers are listed as untrusted."`
	Kind    string `json:"kind" enum:"project,chat" doc:"project: a directory with tools; chat: a model and a prompt only (no skills, actions or MCP servers)."`
	// Agents are the agent definitions a message may name (agent).
	Agents     []CatalogAgent `json:"agents" doc:"Agent definitions a message may name (its agent field)."`
	Skills     []CatalogItem  `json:"skills"`
	Actions    []CatalogItem  `json:"actions"`
	Commands   []CatalogItem  `json:"commands" doc:"Slash commands (prompt templates) defined for the workspace."`
	MCPServers []CatalogMCP   `json:"mcp_servers"`
	Models     []CatalogModel `json:"models" doc:"The models of the server's model table, by provider then id."`
	// DefaultModel is the model string a run uses when its message names
	// none.
	DefaultModel string `json:"default_model" doc:"The model a run uses when its message names none; empty: the default of the provider profile the server is configured with."`
}

// CatalogAgent is an agent definition.
type CatalogAgent struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Model       string `json:"model,omitempty" doc:"The agent's own model; absent: the run's."`
}

// CatalogItem is a named definition: a skill, an action, a command.
type CatalogItem struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// CatalogMCP is an MCP server a run of the workspace would connect to.
type CatalogMCP struct {
	Name      string `json:"name"`
	Transport string `json:"transport" enum:"stdio,http,sse"`
	State     string `json:"state" enum:"connected,connecting,idle,failed,disabled,untrusted" doc:"connected: this process holds a ready connection; connecting: a connection is being (re-)established; idle: no run in this process has used it yet (it starts with the first run; listing never starts a server); failed: the last attempt failed (error says why); disabled: the settings turn it off; untrusted: the workspace declares it but is not trusted."`
	Error     string `json:"error,omitempty"`
	Tools     int    `json:"tools" doc:"Tools the server offers (0 unless connected)."`
}

// CatalogModel is a model of the model table.
type CatalogModel struct {
	ID            string `json:"id" doc:"The model string a message may name (provider/model)."`
	Provider      string `json:"provider"`
	ContextWindow int    `json:"context_window"`
}

// MemoryNote is a note of the workspace's memory (SPEC MEM-1): an entry of
// its NOTES.md.
type MemoryNote struct {
	ID    string `json:"id" doc:"Derived from the note's text: it changes when the text is edited."`
	Scope string `json:"scope" enum:"workspace" doc:"Where the note is kept: workspace (.rein/memory/NOTES.md). A server keeps no user memory."`
	Text  string `json:"text"`
	// CreatedAt is set on the note a POST added; memory files keep no
	// times, so a listing leaves it out.
	CreatedAt time.Time `json:"created_at,omitzero" doc:"When the note was added: set in the answer to the POST that added it; memory files keep no times, so listings leave it out."`
	Verdict   string    `json:"verdict" doc:"The memory scanner's verdict (SPEC MEM-3): ok (shown to the model), withheld: … (the rule and why: the note is kept but never shown), or over_cap (the notes before it fill the cap)."`
}

// MemoryNoteList is the body of GET /workspaces/{id}/memory, in file order.
type MemoryNoteList struct {
	Notes []MemoryNote `json:"notes"`
}

// AddMemoryNote is the body of POST /workspaces/{id}/memory.
type AddMemoryNote struct {
	Text  string `json:"text" minLength:"1" maxLength:"16384" doc:"The note: a plain fact or preference. It goes through the scanner the memory tool uses: an instruction to the model, a secret or hidden text is refused (422, the detail says what it found)."`
	Scope string `json:"scope,omitempty" enum:",workspace,user" doc:"workspace (the default). user is refused: a server's callers are other people than its operator."`
}

// KBDocument is one indexed document of a workspace's knowledge base.
type KBDocument struct {
	Path      string    `json:"path" doc:"Relative to the workspace, slash-separated."`
	Chunks    int       `json:"chunks"`
	IndexedAt time.Time `json:"indexed_at"`
}

// KBDocumentList is the body of GET /workspaces/{id}/kb.
type KBDocumentList struct {
	Documents []KBDocument `json:"documents"`
	Total     int          `json:"total"`
}

// KBAdd is the body of POST /workspaces/{id}/kb.
type KBAdd struct {
	Path string `json:"path" minLength:"1" maxLength:"4096" doc:"A file or directory relative to the workspace; . indexes the whole workspace. Absolute paths, .. and symbolic links leading out of the workspace are refused (422)."`
}

// KBAddReport is the answer to POST /workspaces/{id}/kb.
type KBAddReport struct {
	Added   int `json:"added" doc:"Documents indexed for the first time."`
	Updated int `json:"updated" doc:"Documents indexed again because they changed."`
	Skipped int `json:"skipped" doc:"Files passed over (binary, too large, sensitive, a link out of the workspace)."`
}

// KBSearchResult is the body of GET /workspaces/{id}/kb/search.
type KBSearchResult struct {
	Mode string  `json:"mode" enum:"keyword,hybrid" doc:"hybrid: keyword and vector passes fused; keyword: the keyword pass alone (asked for, or no embedding model)."`
	Hits []KBHit `json:"hits"`
}

// KBHit is one hit of a knowledge-base search.
type KBHit struct {
	Path      string  `json:"path"`
	StartLine int     `json:"start_line"`
	EndLine   int     `json:"end_line"`
	Heading   string  `json:"heading,omitempty"`
	Snippet   string  `json:"snippet" doc:"The lines holding the query's terms, each with the line after it."`
	Score     float64 `json:"score"`
}

// QuestionAnswer is the body of POST /runs/{id}/questions/{call_id}: the
// user's answer to an ask_user question (the question event).
type QuestionAnswer struct {
	Answer string `json:"answer" maxLength:"8000" doc:"The answer, free text (one of the question's options or anything else); empty tells the model the user gave none."`
	// Declined says the user chose not to answer (Esc in the terminal UI):
	// the model is told so, rather than that nobody answered.
	Declined bool `json:"declined,omitempty" doc:"The user chose not to answer; answer must then be empty. The model is told the user declined and to go on with its best judgement."`
}

// SessionContext is what the next run of a session offers its model before
// the conversation: the system prompt and the tools (SPEC API-10, the
// console's run inspector).
type SessionContext struct {
	Model       string        `json:"model" doc:"The model the next run would call, provider/name."`
	System      string        `json:"system" doc:"The system prompt."`
	SystemBytes int           `json:"system_bytes"`
	Tools       []ContextTool `json:"tools" doc:"The tools offered, in the order the request lists them."`
	ToolsBytes  int           `json:"tools_bytes" doc:"The bytes of every tool's name, description and input schema."`
	MaxTokens   int           `json:"max_tokens" doc:"The output limit of the request; 0: the model's default."`
	Skills      []string      `json:"skills,omitempty" doc:"The skills the system prompt's index lists."`
	Warnings    []string      `json:"warnings,omitempty" doc:"What a run's run_start would report."`
}

// ContextTool is one tool a request offers.
type ContextTool struct {
	Name   string `json:"name"`
	Origin string `json:"origin" doc:"Where the tool comes from: builtin, mcp, skill, action, agent…"`
	Bytes  int    `json:"bytes" doc:"Its name, description and input schema, in bytes."`
}
