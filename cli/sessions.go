package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/jsonl"
	"github.com/reinhq/rein/workspace"
)

func (a *App) sessionsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "sessions",
		Aliases: []string{"session"},
		Short:   "List, show, export, fork and delete sessions",
		Long: `Sessions are kept under $XDG_DATA_HOME/rein/sessions (~/.local/share/rein/sessions),
one log per session plus a directory for its files (saved command output, the
audit log). Ids may be shortened to a unique prefix. rein sessions alone
lists them, as rein sessions list does.`,
		Args: cobra.NoArgs,
	}
	serverFlag(cmd, &a.server, true)
	list := a.sessionsList()
	cmd.RunE = func(c *cobra.Command, args []string) error { return list.RunE(c, args) }
	cmd.AddCommand(list, a.sessionsShow(), a.sessionsRemove(), a.sessionsExport(), a.sessionsFork())
	return cmd
}

// openStore opens the session store the configuration names.
func (a *App) openStore() (*jsonl.Store, *workspace.Loaded, error) {
	l, err := a.loadConfig()
	if err != nil {
		return nil, nil, err
	}
	s, err := jsonl.New(l.Effective.String(workspace.SessionsDir))
	if err != nil {
		return nil, nil, fail(ExitError, "sessions: %v", err)
	}
	return s, l, nil
}

// openSession opens the session store and resolves arg (an id or a unique
// prefix) to a session id. The caller closes the store.
func (a *App) openSession(ctx context.Context, arg string) (*jsonl.Store, string, error) {
	store, _, err := a.openStore()
	if err != nil {
		return nil, "", err
	}
	id, err := resolveID(ctx, store, arg)
	if err != nil {
		store.Close()
		return nil, "", err
	}
	return store, id, nil
}

func (a *App) sessionsList() *cobra.Command {
	var all, asJSON bool
	var limit int
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the sessions of this workspace, newest first (--all: every workspace)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, root, err := a.listSessions(cmd.Context(), all)
			if err != nil {
				return err
			}
			if limit > 0 && len(list) > limit {
				list = list[:limit]
			}
			if asJSON {
				if list == nil {
					list = []*session.Session{}
				}
				return writeJSON(a.Stdout, list)
			}
			if len(list) == 0 {
				fmt.Fprintf(a.Stdout, "No sessions in %s yet (rein sessions list --all shows every workspace).\n", root)
				return nil
			}
			return printSessions(a.Stdout, list, all)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "sessions of every workspace")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().IntVarP(&limit, "limit", "n", 0, "show at most this many")
	return cmd
}

// listSessions lists the sessions of this workspace (all: of every
// workspace), here or on --server, and returns the workspace's directory.
func (a *App) listSessions(ctx context.Context, all bool) ([]*session.Session, string, error) {
	if a.server != "" {
		c, err := a.newClient(a.server)
		if err != nil {
			return nil, "", err
		}
		list, err := a.remoteSessions(ctx, c, a.Dir, all)
		return list, a.Dir, err
	}
	store, l, err := a.openStore()
	if err != nil {
		return nil, "", err
	}
	defer store.Close()
	dir := l.Workspace.Root
	if all {
		dir = ""
	}
	list, err := listAll(ctx, store, dir)
	if err != nil {
		return nil, "", err
	}
	warnUnreadable(ctx, a.Stderr, store, list)
	return list, l.Workspace.Root, nil
}

// warnUnreadable warns about the sessions the store's List leaves out
// because their metadata (<id>.meta.json, see package jsonl) cannot be read.
func warnUnreadable(ctx context.Context, w io.Writer, store *jsonl.Store, listed []*session.Session) {
	metas, err := filepath.Glob(filepath.Join(store.Dir(), "*.meta.json"))
	if err != nil {
		return
	}
	seen := make(map[string]bool, len(listed))
	for _, s := range listed {
		seen[s.ID] = true
	}
	for _, path := range metas {
		id := strings.TrimSuffix(filepath.Base(path), ".meta.json")
		if seen[id] || session.ValidID(id) != nil {
			continue
		}
		if _, err := store.Get(ctx, id); err != nil && !errors.Is(err, session.ErrNotFound) {
			fmt.Fprintf(w, "rein: warning: session %s is left out: %s cannot be read: %v\n", id, path, err)
		}
	}
}

func printSessions(w io.Writer, list []*session.Session, withDir bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "ID\tUPDATED\tRUNS\tCOST\tMODEL\tPREVIEW"
	if withDir {
		head = "ID\tUPDATED\tRUNS\tCOST\tMODEL\tWORKSPACE\tPREVIEW"
	}
	fmt.Fprintln(tw, head)
	for _, s := range list {
		dir := ""
		if withDir {
			dir = s.WorkDir + "\t"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s%s\n", s.ID, s.UpdatedAt.Local().Format("2006-01-02 15:04"), s.Runs,
			dollars(s.CostUSD), orDash(s.Model), dir, clip(s.Preview, 60))
	}
	return tw.Flush()
}

func dollars(c float64) string {
	if c == 0 {
		return "-"
	}
	return fmt.Sprintf("$%.4f", c)
}

// sessionReport is what `rein sessions show --json` prints.
type sessionReport struct {
	Session  *session.Session      `json:"session"`
	Messages int                   `json:"messages"`
	Runs     []session.RunRecord   `json:"runs"`
	Heal     session.Report        `json:"heal"`
	Pending  []session.PendingCall `json:"pending,omitempty"`
	// Subagents are the sub-agents the session's runs started (AGENT-4);
	// `rein sessions export` shows their transcripts.
	Subagents []subagentReport `json:"subagents,omitempty"`
	Dir       string           `json:"dir"`
	// LiveIn is the pid of the rein process that has the session open, if
	// any: its calls are running, not interrupted.
	LiveIn string `json:"live_in,omitempty"`
}

// subagentReport sums up one sub-agent's run.
type subagentReport struct {
	Agent        string               `json:"agent"`
	ParentCallID string               `json:"parent_call_id"`
	Depth        int                  `json:"depth"`
	RunID        string               `json:"run_id,omitempty"`
	Messages     int                  `json:"messages"`
	End          *session.SubagentEnd `json:"end,omitempty"`
}

func subagentReports(st *session.State) []subagentReport {
	var out []subagentReport
	for _, t := range st.Subagents {
		out = append(out, subagentReport{Agent: t.Agent, ParentCallID: t.ParentCallID, Depth: t.Depth, RunID: t.RunID,
			Messages: len(t.Messages), End: t.End})
	}
	return out
}

func (a *App) sessionsShow() *cobra.Command {
	var asJSON, kill bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a session: figures, runs, what healing fixed, interrupted calls and their processes",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if a.server != "" {
				return a.remoteShow(ctx, args[0], asJSON)
			}
			store, id, err := a.openSession(ctx, args[0])
			if err != nil {
				return err
			}
			defer store.Close()
			// A session open in another rein process is live: its pending
			// calls are running, not interrupted. Taking the lock tells.
			lockErr := store.Acquire(id)
			live := errors.Is(lockErr, session.ErrLocked)
			switch {
			case live && kill:
				return fail(ExitError, "session %s is open in another rein process (pid %s); its calls are running, not interrupted. Stop that rein first.", id, lockHolder(lockErr))
			case lockErr != nil && !live:
				return failErr(lockErr)
			case !live:
				defer store.Release(id)
			}
			st, err := session.Load(ctx, store, id)
			if err != nil {
				return failErr(err)
			}
			rep := sessionReport{Session: st.Session, Messages: len(st.Messages), Runs: st.Runs, Heal: st.Heal, Subagents: subagentReports(st),
				Pending: st.Pending, Dir: filepath.Join(store.Dir(), id)}
			if live {
				// Only damage is real; the rest is a run in progress.
				rep.LiveIn, rep.Pending, rep.Heal = lockHolder(lockErr), nil, session.Report{Damaged: st.Heal.Damaged}
			}
			if kill {
				stopped, err := stopOrphans(ctx, st.Pending)
				if err != nil {
					return fail(ExitError, "%v", err)
				}
				if len(stopped) == 0 {
					fmt.Fprintln(a.Stderr, "No processes of interrupted calls are running.")
				} else {
					fmt.Fprintf(a.Stderr, "Stopped %s.\n", pgidList(stopped))
					for i := range rep.Pending {
						rep.Pending[i].Alive = false
					}
				}
			}
			if asJSON {
				return writeJSON(a.Stdout, rep)
			}
			printSession(a.Stdout, rep)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&kill, "kill-orphans", false, "stop the processes interrupted tool calls left running")
	return cmd
}

// lockHolder is the pid a session's lock error names ("?" when none).
func lockHolder(err error) string {
	if le, ok := errors.AsType[*session.LockError](err); ok && le.Holder != "" {
		return le.Holder
	}
	return "?"
}

func printSession(w io.Writer, r sessionReport) {
	s := r.Session
	fmt.Fprintf(w, "Session    %s\n", s.ID)
	if s.ParentID != "" {
		fmt.Fprintf(w, "Forked     from %s at entry %d\n", s.ParentID, s.ForkSeq)
	}
	fmt.Fprintf(w, "Workspace  %s\nFiles      %s\n", s.WorkDir, r.Dir)
	fmt.Fprintf(w, "Model      %s\n", orDash(s.Model))
	fmt.Fprintf(w, "Created    %s   updated %s\n", s.CreatedAt.Local().Format(time.DateTime), s.UpdatedAt.Local().Format(time.DateTime))
	fmt.Fprintf(w, "Runs       %d   messages %d\n", s.Runs, r.Messages)
	fmt.Fprintf(w, "Usage      %s\n", usageLine(s.Usage.InputTokens, s.Usage.OutputTokens, s.Usage.CacheReadTokens, s.Usage.CacheWriteTokens, s.CostUSD))
	if s.Preview != "" {
		fmt.Fprintf(w, "Preview    %s\n", s.Preview)
	}
	if r.LiveIn != "" {
		fmt.Fprintf(w, "Open       in rein process %s; its calls are running, not interrupted\n", r.LiveIn)
	}
	if !r.Heal.Empty() {
		fmt.Fprintf(w, "Healed     %s (stored when the session is next resumed)\n", r.Heal.String())
	}
	if len(r.Pending) > 0 {
		fmt.Fprintln(w, "Interrupted calls:")
		for _, p := range r.Pending {
			state := "no process recorded"
			switch {
			case p.PGID != 0 && p.Alive:
				state = fmt.Sprintf("pgid %d still running — stop it with --kill-orphans", p.PGID)
			case p.Stopped:
				state = fmt.Sprintf("pgid %d stopped", p.PGID)
			case p.PGID != 0:
				state = fmt.Sprintf("pgid %d no longer running", p.PGID)
			}
			fmt.Fprintf(w, "  %s %s %s: %s\n", p.CallID, p.Tool, clip(inputSummary(p.Input), 60), state)
		}
	}
	if len(r.Runs) > 0 {
		fmt.Fprintln(w, "Runs:")
		for _, run := range r.Runs {
			line := fmt.Sprintf("  %s  %-17s %2d turns  %d tool calls  %s", run.StartedAt.Local().Format("01-02 15:04:05"),
				run.Reason, run.Turns, run.Stats.ToolCalls, dollars(run.CostUSD))
			if run.Error != "" {
				line += "  " + clip(run.Error, 60)
			}
			fmt.Fprintln(w, line)
		}
	}
	if len(r.Subagents) > 0 {
		fmt.Fprintln(w, "Sub-agents (transcripts: rein sessions export):")
		for _, sa := range r.Subagents {
			state := "cut off"
			if e := sa.End; e != nil {
				state = fmt.Sprintf("%s, %d turns, %s", e.Reason, e.Turns,
					usageLine(e.Usage.InputTokens, e.Usage.OutputTokens, e.Usage.CacheReadTokens, e.Usage.CacheWriteTokens, e.CostUSD))
			}
			fmt.Fprintf(w, "  %s%s (call %s): %d messages; %s\n", strings.Repeat("  ", sa.Depth-1), sa.Agent, sa.ParentCallID, sa.Messages, state)
		}
	}
}

// usageLine formats token counts and cost.
func usageLine(in, out, cacheRead, cacheWrite int64, cost float64) string {
	s := fmt.Sprintf("%d input, %d output tokens", in, out)
	if cacheRead > 0 || cacheWrite > 0 {
		s += fmt.Sprintf(" (cache: %d read, %d written)", cacheRead, cacheWrite)
	}
	if cost > 0 {
		s += fmt.Sprintf(", $%.4f", cost)
	}
	return s
}

func (a *App) sessionsRemove() *cobra.Command {
	return &cobra.Command{
		Use:     "rm ID...",
		Aliases: []string{"delete"},
		Short:   "Delete sessions and their files",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if a.server != "" {
				return a.remoteRemove(ctx, args)
			}
			store, _, err := a.openStore()
			if err != nil {
				return err
			}
			defer store.Close()
			for _, arg := range args {
				id, err := resolveID(ctx, store, arg)
				if err != nil {
					return err
				}
				if err := store.Delete(ctx, id); err != nil {
					if errors.Is(err, session.ErrLocked) {
						return fail(ExitError, "%v\nThe session is in use; try again when that rein has finished.", err)
					}
					return failErr(err)
				}
				if err := os.RemoveAll(filepath.Join(store.Dir(), id)); err != nil {
					return fail(ExitError, "removing the files of %s: %v", id, err)
				}
				fmt.Fprintf(a.Stdout, "Deleted %s.\n", id)
			}
			return nil
		},
	}
}

func (a *App) sessionsExport() *cobra.Command {
	var format, out string
	cmd := &cobra.Command{
		Use:   "export ID",
		Short: "Export a session as Markdown or JSON Lines",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if format != "markdown" && format != "md" && format != "jsonl" {
				return usageErrorf("--format %q: want markdown or jsonl", format)
			}
			if a.server != "" {
				c, err := a.newClient(a.server)
				if err != nil {
					return err
				}
				return a.remoteExport(ctx, c, args[0], format, out)
			}
			store, id, err := a.openSession(ctx, args[0])
			if err != nil {
				return err
			}
			defer store.Close()
			return a.export(ctx, store, id, format, out)
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "markdown", "markdown or jsonl")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to this file instead of stdout")
	return cmd
}

// export writes session id in format to path, or stdout.
func (a *App) export(ctx context.Context, store session.Store, id, format, path string) error {
	w, closeOut, err := a.output(path)
	if err != nil {
		return err
	}
	if format == "jsonl" {
		err = session.ExportJSONL(w, store.Entries(ctx, id, 0))
	} else {
		var st *session.State
		if st, err = session.Load(ctx, store, id); err == nil {
			err = session.ExportMarkdown(w, st)
		}
	}
	if cerr := closeOut(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(ExitError, "export %s: %v", id, err)
	}
	return nil
}

// output is where a command writes: the file at path, or stdout when path
// is empty; close closes the file.
func (a *App) output(path string) (w io.Writer, close func() error, err error) {
	if path == "" {
		return a.Stdout, func() error { return nil }, nil
	}
	f, err := os.Create(a.abs(path))
	if err != nil {
		return nil, nil, fail(ExitError, "%v", err)
	}
	return f, f.Close, nil
}

func (a *App) sessionsFork() *cobra.Command {
	var at int64
	cmd := &cobra.Command{
		Use:   "fork ID",
		Short: "Copy a session (up to an entry) into a new one, to go on from there",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if a.server != "" {
				return a.remoteFork(ctx, args[0], at)
			}
			store, id, err := a.openSession(ctx, args[0])
			if err != nil {
				return err
			}
			defer store.Close()
			s, err := store.Fork(ctx, id, at)
			if err != nil {
				return failErr(err)
			}
			fmt.Fprintf(a.Stdout, "Forked %s into %s; go on with: rein run --resume %s \"…\"\n", id, s.ID, s.ID)
			return nil
		},
	}
	cmd.Flags().Int64Var(&at, "at", 0, "copy the entries up to this sequence number (default: all)")
	return cmd
}

// sessionsLine is a one-line description of a session, for /sessions.
func sessionsLine(s *session.Session) string {
	return strings.TrimSpace(fmt.Sprintf("%s  %s  %s", s.ID, s.UpdatedAt.Local().Format("2006-01-02 15:04"), clip(s.Preview, 60)))
}
