// Package ollama is rein's adapter for Ollama's native API, over net/http
// alone (Ollama publishes no Go SDK rein builds on). Chat with Ollama goes
// through the OpenAI-compatible endpoint ({host}/v1, package openai); this
// package serves what that endpoint does not do as well: embeddings.
//
// [NewEmbedder] posts {"model", "input": [texts]} to {BaseURL}/api/embed and
// reads {"embeddings": [[…]]}, the documented API of Ollama 0.3 and
// later. BaseURL takes every form OLLAMA_HOST does ("127.0.0.1:11434",
// "http://gpu-box:11434", ":11434", "0.0.0.0"); empty means
// http://127.0.0.1:11434. The adapter reads no environment: the caller
// passes OLLAMA_HOST in (the registry does).
//
// Failures are *llm.Error values classified by vendorhttp.FromHTTP and
// llm.FromTransport, with hints for Ollama's usual ones: a refused
// connection asks whether `ollama serve` is running, an unknown model says
// to `ollama pull` it. Every call is one HTTP request per batch; rein's
// llm.RetryingEmbedder goes on top.
package ollama
