package permission

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/reinhq/rein/tool"
)

// CallOutcome is how an audited call ended.
type CallOutcome string

// The call outcomes.
const (
	OutcomeOK          CallOutcome = "ok"          // the tool ran and succeeded
	OutcomeError       CallOutcome = "error"       // the tool ran and failed
	OutcomeDenied      CallOutcome = "denied"      // the policy, the user or a hook refused it
	OutcomeInterrupted CallOutcome = "interrupted" // the run was cancelled
)

// DecidedBy says who made a decision (SPEC PERM-4).
type DecidedBy string

// Who decides.
const (
	DecidedByPolicy  DecidedBy = "policy"  // modes, rules, built-in protections, the harness's own checks
	DecidedByUser    DecidedBy = "user"    // whoever drives the run answered a question
	DecidedByHook    DecidedBy = "hook"    // a pre_tool_use or permission_request hook
	DecidedByTimeout DecidedBy = "timeout" // nobody answered a question in time: deny
)

// AuditRecord is one line of the audit log: who asked for what, what was
// decided, who decided it and how the call ended (SPEC PERM-4).
type AuditRecord struct {
	Time      time.Time `json:"time"`
	SessionID string    `json:"session_id,omitempty"`
	RunID     string    `json:"run_id,omitempty"`
	CallID    string    `json:"call_id,omitempty"`
	Tool      string    `json:"tool"`
	// Origin says where the tool comes from: builtin, action, skill, mcp
	// or agent (SPEC TOOL-2).
	Origin tool.Origin `json:"origin,omitempty"`
	// Agent names the sub-agent that made the call; empty for the
	// session's own.
	Agent    string          `json:"agent,omitempty"`
	Input    json.RawMessage `json:"input,omitempty"` // secrets redacted, see [Redact]
	Decision Decision        `json:"decision"`
	Reason   string          `json:"reason,omitempty"`
	Rule     string          `json:"rule,omitempty"` // the deciding rule, as ParseRule reads it
	// DecidedBy says who decided: policy, user, hook or timeout.
	DecidedBy DecidedBy `json:"decided_by,omitempty"`
	// Answer is the approver's (once, always, deny), when one answered.
	Answer   Answer        `json:"answer,omitempty"`
	Duration time.Duration `json:"-"` // of the call; JSON duration_ms
	Outcome  CallOutcome   `json:"outcome"`
	Error    string        `json:"error,omitempty"`
}

type auditJSON AuditRecord

// MarshalJSON writes Duration as duration_ms.
func (r AuditRecord) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		auditJSON
		DurationMS float64 `json:"duration_ms"`
	}{auditJSON(r), float64(r.Duration) / float64(time.Millisecond)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *AuditRecord) UnmarshalJSON(data []byte) error {
	var v struct {
		auditJSON
		DurationMS float64 `json:"duration_ms"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*r = AuditRecord(v.auditJSON)
	r.Duration = time.Duration(v.DurationMS * float64(time.Millisecond))
	return nil
}

// NewAuditRecord starts the record of a request the policy decided
// (DecidedBy policy); the caller changes DecidedBy and fills in Answer when
// someone else decided, and Duration, Outcome and Error once the call is
// over.
func NewAuditRecord(now time.Time, r Request, o Outcome) AuditRecord {
	rec := AuditRecord{
		Time: now, SessionID: r.SessionID, RunID: r.RunID, CallID: r.CallID,
		Tool: r.Tool, Origin: r.Origin, Agent: r.Agent, Input: Redact(r.Input), Decision: o.Decision, Reason: o.Reason, DecidedBy: DecidedByPolicy,
	}
	if o.Rule != nil {
		rec.Rule = o.Rule.String()
	}
	return rec
}

// Auditor keeps audit records. Record must be safe for concurrent use and
// must redact the input itself (callers may pass it raw).
type Auditor interface {
	Record(ctx context.Context, r AuditRecord) error
}

// FileAuditor appends records to a JSONL file, one JSON object a line.
type FileAuditor struct {
	mu sync.Mutex
	f  *os.File
}

// OpenFileAuditor opens (creating) a JSONL audit file for appending.
func OpenFileAuditor(path string) (*FileAuditor, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("permission: audit: %w", err)
	}
	return &FileAuditor{f: f}, nil
}

// Record appends one line, written with a single write call.
func (a *FileAuditor) Record(ctx context.Context, r AuditRecord) error {
	r.Input = Redact(r.Input)
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("permission: audit: %w", err)
	}
	line = append(line, '\n')
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return fmt.Errorf("permission: audit: closed")
	}
	if _, err := a.f.Write(line); err != nil {
		return fmt.Errorf("permission: audit: %w", err)
	}
	return nil
}

// Close syncs and closes the file.
func (a *FileAuditor) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return nil
	}
	err := a.f.Sync()
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	a.f = nil
	return err
}

// MemoryAuditor keeps records in memory, for tests and embedding.
type MemoryAuditor struct {
	mu   sync.Mutex
	recs []AuditRecord
}

// Record keeps r.
func (a *MemoryAuditor) Record(ctx context.Context, r AuditRecord) error {
	r.Input = Redact(r.Input)
	a.mu.Lock()
	a.recs = append(a.recs, r)
	a.mu.Unlock()
	return nil
}

// Records returns a copy of what was recorded.
func (a *MemoryAuditor) Records() []AuditRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.recs)
}

// Redacted replaces every secret value.
const Redacted = "[REDACTED]"

// secretWords are the words of a key name that mark its value secret.
var secretWords = map[string]bool{
	"token": true, "key": true, "secret": true, "password": true, "passwd": true, "pwd": true,
	"passphrase": true, "credential": true, "credentials": true, "authorization": true,
	"auth": true, "apikey": true, "cookie": true, "private": true,
}

// secretText matches well-known token shapes inside any string.
var secretText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b(sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{30,})|(?i:bearer\s+)[A-Za-z0-9._~+/=-]{12,}`)
})

// Redact returns the JSON input with the values of keys named like secrets
// (token, api_key, secret, password, authorization, …) replaced by
// [Redacted], and well-known token shapes (sk-…, ghp_…, AKIA…, Bearer …)
// masked in every string. Input that is not JSON is returned masked as a
// JSON string.
func Redact(input json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(input)) == 0 {
		return input
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(input))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		out, _ := json.Marshal(maskText(string(input)))
		return out
	}
	out, err := json.Marshal(redactValue(v))
	if err != nil {
		return json.RawMessage(`"` + Redacted + `"`)
	}
	return out
}

func redactValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if secretKey(k) {
				v[k] = Redacted
			} else {
				v[k] = redactValue(x)
			}
		}
		return v
	case []any:
		for i, x := range v {
			v[i] = redactValue(x)
		}
		return v
	case string:
		return maskText(v)
	}
	return v
}

func maskText(s string) string { return secretText().ReplaceAllString(s, Redacted) }

// secretKey splits a key into words (snake, kebab, dotted and camel case)
// and reports whether one of them names a secret. "max_tokens" and
// "keyboard" are not secrets; "apiKey", "GITHUB_TOKEN" and "password" are.
func secretKey(k string) bool {
	if secretWords[strings.ToLower(k)] {
		return true
	}
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	runes := []rune(k)
	for i, c := range runes {
		switch {
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			flush()
		case unicode.IsUpper(c) && i > 0 && unicode.IsLower(runes[i-1]):
			flush()
			cur = append(cur, c)
		default:
			cur = append(cur, c)
		}
	}
	flush()
	for _, w := range words {
		if secretWords[w] {
			return true
		}
	}
	return false
}
