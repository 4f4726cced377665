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

// ErrNoModel is returned by runs of a [Setup] without a model
// ([Setup.WithModel]).
var ErrNoModel = errors.New("runner: no model chosen")

// errBound refuses to bind a second session to a conversation.
var errBound = errors.New("runner: the conversation has its session; start another conversation for another session")

// Create makes s (its WorkDir and Model filled in when empty) the conversation's
// new session, stores it and binds it.
func (c *Conversation) Create(ctx context.Context, s *session.Session) error {
	if c.Session() != nil {
		return errBound
	}
	if s.WorkDir == "" {
		s.WorkDir = c.s.ws.Root
	}
	if s.Model == "" && c.s.model != nil {
		s.Model = c.s.model.Label
	}
	if err := c.s.cfg.Store.Create(ctx, s); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	if err := c.lock(s.ID); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	return c.bind(s, nil)
}

// lock takes the session's write lock when the store has one.
func (c *Conversation) lock(id string) error {
	if l, ok := c.s.cfg.Store.(session.Locker); ok {
		return l.Acquire(id)
	}
	return nil
}

func (c *Conversation) unlock(id string) {
	if l, ok := c.s.cfg.Store.(session.Locker); ok {
		l.Release(id)
	}
}

// Resume binds stored session id for writing: it takes its lock (an error
// wrapping session.ErrLocked when another process has it), loads and heals
// it, and stores what healing fixed. The loaded state tells the front end
// what healing fixed and which processes interrupted calls left running;
// once it has dealt with those, it calls [Conversation.Resumed].
func (c *Conversation) Resume(ctx context.Context, id string) (*session.State, error) {
	if c.Session() != nil {
		return nil, errBound
	}
	if err := c.lock(id); err != nil {
		return nil, err
	}
	st, err := session.Load(ctx, c.s.cfg.Store, id)
	if err != nil {
		c.unlock(id)
		return nil, err
	}
	if err := c.bind(st.Session, st); err != nil {
		c.unlock(id)
		return nil, err
	}
	return st, nil
}

// Resumed stores the repairs of a resumed session (after the front end
// stopped, or not, the processes interrupted calls left running: st's
// Recheck says which still run), remembers them for the next run's
// run_start, and fires session_start with source "resume" (HOOK-1).
func (c *Conversation) Resumed(ctx context.Context, st *session.State) error {
	if err := c.Heal(ctx, st); err != nil {
		return err
	}
	c.SessionStarted(ctx, "resume")
	return nil
}

// Heal stores the repairs of a loaded session and remembers them for the
// next run's run_start, without firing session_start: the server loads a
// session for every run of it.
func (c *Conversation) Heal(ctx context.Context, st *session.State) error {
	st.Recheck()
	// Recheck restates the results of calls whose process groups stopped
	// since Load (--kill-orphans, or they finished): the history the next
	// run sends is that one, not the one bound at Resume (SESS-1).
	c.history = st.Messages
	if !st.Heal.Empty() {
		c.healed = st.Heal.String()
	}
	if err := c.rec.RecordHeal(ctx, st); err != nil {
		return fmt.Errorf("session %s: recording the repairs: %w", st.Session.ID, err)
	}
	return nil
}

// bind makes s the current session: its directory (output spills, audit
// logs; made at once only for the audit files of Config.Audit's absence),
// recorder, tools and compactor. st, when set, is its loaded state.
func (c *Conversation) bind(s *session.Session, st *session.State) error {
	c.mu.Lock()
	c.sess = s
	c.usage, c.cost = s.Usage, s.CostUSD
	c.mu.Unlock()
	c.sessDir = filepath.Join(c.s.cfg.SessionsDir, s.ID)
	if c.s.cfg.Audit == nil { // its audit files are opened now
		if err := os.MkdirAll(c.sessDir, 0o700); err != nil {
			return fmt.Errorf("session directory: %w", err)
		}
	} // else made by the first file put in it (see sessiondir.go)
	c.rec = NewRecorder(c.s.cfg.Store, s.ID)
	if err := c.openAudit(s); err != nil {
		return err
	}
	c.history, c.focus = nil, agent.Focus{}
	if st != nil {
		c.history, c.focus = st.Messages, FocusOf(st)
	}
	c.tracker, c.todos, c.compactor = builtin.NewFileTracker(), &builtin.Todos{}, nil
	return c.buildTools()
}

// openAudit opens the session's audit trail: the one Config.Audit gives,
// else audit.jsonl and hooks.jsonl in its directory.
func (c *Conversation) openAudit(s *session.Session) error {
	if c.s.cfg.Audit != nil {
		pa, ha, err := c.s.cfg.Audit(s)
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		c.audit = pa
		c.hookLog.set(ha)
		return nil
	}
	fa, err := permission.OpenFileAuditor(filepath.Join(c.sessDir, "audit.jsonl"))
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	c.audit, c.closer = fa, fa.Close
	if c.hooks != nil {
		if err := c.hookLog.open(filepath.Join(c.sessDir, "hooks.jsonl")); err != nil {
			return fmt.Errorf("hook audit log: %w", err)
		}
	}
	return nil
}

// Close releases the session: its lock, its audit trail and its
// knowledge base. The conversation takes no more runs.
func (c *Conversation) Close() error {
	s := c.Session()
	if s == nil {
		return nil
	}
	if c.closer != nil {
		c.closer()
		c.closer = nil
	}
	c.closeJobs()
	if c.rec != nil {
		_ = c.rec.waitPreview() // before the lock goes: the write needs it; the run's end reported what matters
	}
	c.audit = nil
	c.hookLog.close()
	if c.kb != nil {
		if err := c.kb.Close(); err != nil {
			c.s.logger.Warn("closing the knowledge base", "err", err)
		}
		c.kb = nil
	}
	c.unlock(s.ID)
	c.mu.Lock()
	c.sess, c.usage, c.cost = nil, llm.Usage{}, 0
	c.mu.Unlock()
	c.rec, c.history, c.tools = nil, nil, nil
	return nil
}

// Pending reports whether the conversation waits for the model: its last
// message holds tool results (SPEC LOOP-9).
func (c *Conversation) Pending() bool {
	n := len(c.history)
	return n > 0 && c.history[n-1].Role == llm.RoleUser && len(c.history[n-1].ToolResults()) > 0
}

// healHistory keeps the in-memory history sendable: a run the consumer
// stopped early may leave tool calls without results.
func (c *Conversation) healHistory() {
	if llm.CheckPairing(c.history) != nil {
		c.history, _ = session.Heal(c.history, nil)
	}
}
