// Package api holds the wire types of rein's HTTP API (SPEC API-1): the JSON
// bodies the server (package server) reads and writes and the Go client
// (package client) sends and decodes, and the conversions from the core types
// of package session.
//
// Every field is snake_case. Request types carry validation tags that huma
// turns into the OpenAPI 3.1 schema and checks before a handler runs (enum,
// minLength, maxLength, minimum, maximum), so the published document states
// the rules a request must follow. Caller ids never appear in a response: a
// caller only ever sees its own resources. Token counts keep the JSON of
// llm.Usage.
//
// No other package defines wire types (docs/architecture.md, "Conventions":
// no wire type outside api).
package api
