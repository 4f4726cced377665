package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/tool/builtin"
)

// ErrNoModel is returned by runs started before [Engine.UseModel].
var ErrNoModel = errors.New("runner: no model chosen")

// Create makes s (its WorkDir and Model filled in when empty) the engine's
// new session, stores it and binds it.
func (e *Engine) Create(ctx context.Context, s *session.Session) error {
	if s.WorkDir == "" {
		s.WorkDir = e.ws.Root
	}
	if s.Model == "" && e.model != nil {
		s.Model = e.model.Label
	}
	if err := e.cfg.Store.Create(ctx, s); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	if err := e.lock(s.ID); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	return e.bind(s, nil)
}

// lock takes the session's write lock when the store has one.
func (e *Engine) lock(id string) error {
	if l, ok := e.cfg.Store.(session.Locker); ok {
		return l.Acquire(id)
	}
	return nil
}

func (e *Engine) unlock(id string) {
	if l, ok := e.cfg.Store.(session.Locker); ok {
		l.Release(id)
	}
}

// Resume binds stored session id for writing: it takes its lock (an error
// wrapping session.ErrLocked when another process has it), loads and heals
// it, and stores what healing fixed. The loaded state tells the front end
// what healing fixed and which processes interrupted calls left running;
// once it has dealt with those, it calls [Engine.Resumed].
func (e *Engine) Resume(ctx context.Context, id string) (*session.State, error) {
	if err := e.lock(id); err != nil {
		return nil, err
	}
	st, err := session.Load(ctx, e.cfg.Store, id)
	if err != nil {
		e.unlock(id)
		return nil, err
	}
	e.Unbind()
	if err := e.bind(st.Session, st); err != nil {
		e.unlock(id)
		return nil, err
	}
	return st, nil
}

// Resumed stores the repairs of a resumed session (after the front end
// stopped, or not, the processes interrupted calls left running: st's
// Recheck says which still run), remembers them for the next run's
// run_start, and fires session_start with source "resume" (HOOK-1).
func (e *Engine) Resumed(ctx context.Context, st *session.State) error {
	if err := e.Heal(ctx, st); err != nil {
		return err
	}
	e.SessionStarted(ctx, "resume")
	return nil
}

// Heal stores the repairs of a loaded session and remembers them for the
// next run's run_start, without firing session_start: the server loads a
// session for every run of it.
func (e *Engine) Heal(ctx context.Context, st *session.State) error {
	st.Recheck()
	if !st.Heal.Empty() {
		e.healed = st.Heal.String()
	}
	if err := e.rec.RecordHeal(ctx, st); err != nil {
		return fmt.Errorf("session %s: recording the repairs: %w", st.Session.ID, err)
	}
	return nil
}

// bind makes s the current session: its directory (output spills, audit
// logs), recorder, tools and compactor. st, when set, is its loaded state.
func (e *Engine) bind(s *session.Session, st *session.State) error {
	e.mu.Lock()
	e.sess = s
	e.usage, e.cost = s.Usage, s.CostUSD
	e.mu.Unlock()
	e.sessDir = filepath.Join(e.cfg.SessionsDir, s.ID)
	if err := os.MkdirAll(e.sessDir, 0o700); err != nil {
		return fmt.Errorf("session directory: %w", err)
	}
	e.rec = NewRecorder(e.cfg.Store, s.ID)
	if err := e.openAudit(s); err != nil {
		return err
	}
	e.history, e.focus = nil, agent.Focus{}
	if st != nil {
		e.history, e.focus = st.Messages, FocusOf(st)
	}
	e.tracker, e.todos, e.compactor = builtin.NewFileTracker(), &builtin.Todos{}, nil
	return e.buildTools()
}

// openAudit opens the session's audit trail: the one Config.Audit gives,
// else audit.jsonl and hooks.jsonl in its directory.
func (e *Engine) openAudit(s *session.Session) error {
	if e.cfg.Audit != nil {
		pa, ha, err := e.cfg.Audit(s)
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		e.audit = pa
		e.hookLog.set(ha)
		return nil
	}
	fa, err := permission.OpenFileAuditor(filepath.Join(e.sessDir, "audit.jsonl"))
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	e.audit, e.closer = fa, fa.Close
	if e.hooks != nil {
		if err := e.hookLog.open(filepath.Join(e.sessDir, "hooks.jsonl")); err != nil {
			return fmt.Errorf("hook audit log: %w", err)
		}
	}
	return nil
}

// Unbind closes the current session, if any; the next run starts a new
// one.
func (e *Engine) Unbind() {
	s := e.Session()
	if s == nil {
		return
	}
	if e.closer != nil {
		e.closer()
		e.closer = nil
	}
	e.audit = nil
	e.hookLog.close()
	if e.kb != nil {
		if err := e.kb.Close(); err != nil {
			e.logger.Warn("closing the knowledge base", "err", err)
		}
		e.kb = nil
	}
	e.unlock(s.ID)
	e.mu.Lock()
	e.sess, e.usage, e.cost = nil, llm.Usage{}, 0
	e.mu.Unlock()
	e.rec, e.history, e.tools = nil, nil, nil
}

// Pending reports whether the conversation waits for the model: its last
// message holds tool results (SPEC LOOP-9).
func (e *Engine) Pending() bool {
	n := len(e.history)
	return n > 0 && e.history[n-1].Role == llm.RoleUser && len(e.history[n-1].ToolResults()) > 0
}

// healHistory keeps the in-memory history sendable: a run the consumer
// stopped early may leave tool calls without results.
func (e *Engine) healHistory() {
	if llm.CheckPairing(e.history) != nil {
		e.history, _ = session.Heal(e.history, nil)
	}
}
