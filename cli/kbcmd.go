package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/kb"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/tool/kbtool"
)

func (a *App) kbCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kb",
		Short: "The workspace's knowledge base: add, search, list, remove, re-index documents",
		Long: `The knowledge base (docs/knowledge-base.md) holds documents of the workspace —
notes, docs, specifications, code — cut into chunks and indexed for search, in
` + runner.KBFile + `. The model searches it with the kb_search tool, offered once
the workspace has a knowledge base. Search is by keyword (BM25 over code-aware
terms) and, when kb.embedding_model names an embedding model, by meaning too,
fused by reciprocal rank. Files are re-indexed only when their content changed;
.gitignore, hidden files, binaries and files over 1 MiB are skipped.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(a.kbAdd(), a.kbSearch(), a.kbList(), a.kbRemove(), a.kbReindex())
	return cmd
}

// openKB opens the knowledge base of dir's workspace (creating it when
// create).
func (a *App) openKB(dir string, create bool) (*runner.KnowledgeBase, error) {
	l, err := a.loadAt(dir)
	if err != nil {
		return nil, err
	}
	reg, err := a.registryOf(l)
	if err != nil {
		return nil, err
	}
	k, err := runner.OpenKnowledgeBase(l, reg, a.resolveEmbedder, create)
	switch {
	case errors.Is(err, runner.ErrNoKnowledgeBase):
		return nil, fail(ExitError, "%v", err)
	case err != nil:
		return nil, fail(ExitError, "knowledge base: %v", err)
	}
	return k, nil
}

func (a *App) kbAdd() *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "add PATH...",
		Short: "Index files and directories (new and changed files only)",
		Long: `Indexes the files and directories named, relative to the workspace (or
absolute inside it). Unchanged files are skipped by content hash; under a
directory, files that are gone leave the index. A file that cannot be indexed
(binary, too large, not UTF-8, unreadable) is reported and skipped; the rest
are indexed. With kb.embedding_model set, chunks are embedded too (the text is
sent to that provider).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.kbIndex(cmd.Context(), dir, asJSON, func(k *runner.KnowledgeBase, p func(kb.Progress)) (*kb.Report, error) {
				return k.Add(cmd.Context(), args, p)
			})
		},
	}
	cmd.Flags().StringVar(&dir, "cwd", "", "the workspace directory (default: where rein runs)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

func (a *App) kbReindex() *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "reindex",
		Short: "Check every indexed file again: changed ones re-indexed, deleted ones removed",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.kbIndex(cmd.Context(), dir, asJSON, func(k *runner.KnowledgeBase, p func(kb.Progress)) (*kb.Report, error) {
				return k.Reindex(cmd.Context(), p)
			})
		},
	}
	cmd.Flags().StringVar(&dir, "cwd", "", "the workspace directory (default: where rein runs)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// kbIndex runs an indexing pass with a progress bar on a terminal (SPEC
// CLI-4) and prints its report.
func (a *App) kbIndex(ctx context.Context, dir string, asJSON bool,
	index func(*runner.KnowledgeBase, func(kb.Progress)) (*kb.Report, error)) error {
	k, err := a.openKB(dir, true)
	if err != nil {
		return err
	}
	defer k.Close()
	var bar *progressBar
	if a.StderrTTY && !asJSON {
		bar = &progressBar{w: a.Stderr, label: "indexing"}
	}
	start := time.Now()
	rep, err := index(k, bar.update)
	bar.clear()
	if rep != nil {
		if asJSON {
			if jerr := writeJSON(a.Stdout, rep); jerr != nil {
				return jerr
			}
		} else {
			printKBReport(a.Stdout, rep, k, time.Since(start))
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return fail(ExitCancelled, "indexing stopped; what was indexed is kept: run the command again to go on")
		}
		return fail(ExitError, "%v", err)
	}
	return nil
}

// maxSkipsShown bounds the skipped files a report lists.
const maxSkipsShown = 20

func printKBReport(w io.Writer, rep *kb.Report, k *runner.KnowledgeBase, d time.Duration) {
	fmt.Fprintf(w, "%d added, %d updated, %d unchanged, %d removed; %d chunk(s) from %s in %s\n",
		rep.Added, rep.Updated, rep.Unchanged, rep.Removed, rep.Chunks, humanSize(rep.Bytes), d.Round(10*time.Millisecond))
	for i, s := range rep.Skipped {
		if i == maxSkipsShown {
			fmt.Fprintf(w, "… and %d more skipped (--json lists them all)\n", len(rep.Skipped)-i)
			break
		}
		fmt.Fprintf(w, "skipped %s: %s\n", s.Path, s.Reason)
	}
	if k.Model == "" {
		fmt.Fprintln(w, kb.NoteKeywordOnly)
	} else {
		fmt.Fprintf(w, "embedded with %s\n", k.Model)
	}
}

// humanSize writes a byte count as people read it.
func humanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func (a *App) kbSearch() *cobra.Command {
	var dir string
	var asJSON bool
	var top int
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search the knowledge base as the kb_search tool does",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, err := a.openKB(dir, false)
			if err != nil {
				return err
			}
			defer k.Close()
			res, err := k.Search(cmd.Context(), strings.Join(args, " "), kb.SearchOptions{TopK: top})
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			if asJSON {
				return writeJSON(a.Stdout, res)
			}
			_, err = fmt.Fprintln(a.Stdout, kbtool.Render(res))
			return err
		},
	}
	cmd.Flags().StringVar(&dir, "cwd", "", "the workspace directory (default: where rein runs)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (mode, note, hits with ranks, scores, matched terms and snippets)")
	cmd.Flags().IntVarP(&top, "top", "k", kb.DefaultTopK, "how many hits (at most 50)")
	return cmd
}

func (a *App) kbList() *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the indexed documents: path, chunks, size, embedding, when indexed",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			k, err := a.openKB(dir, false)
			if err != nil {
				return err
			}
			defer k.Close()
			docs, err := k.Documents(cmd.Context())
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			if asJSON {
				return writeJSON(a.Stdout, docs)
			}
			tw := tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PATH\tCHUNKS\tSIZE\tEMBEDDING\tINDEXED")
			for _, d := range docs {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", d.Path, d.Chunks, humanSize(d.Size), orDash(d.Embedding), d.Indexed.Local().Format("2006-01-02 15:04"))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&dir, "cwd", "", "the workspace directory (default: where rein runs)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *App) kbRemove() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:     "rm PATH",
		Aliases: []string{"remove"},
		Short:   "Remove a document, or every document under a directory, from the index (files stay)",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, err := a.openKB(dir, false)
			if err != nil {
				return err
			}
			defer k.Close()
			n, err := k.Remove(cmd.Context(), args[0])
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			_, err = fmt.Fprintf(a.Stdout, "removed %d document(s) from the index\n", n)
			return err
		},
	}
	cmd.Flags().StringVar(&dir, "cwd", "", "the workspace directory (default: where rein runs)")
	return cmd
}

// progressBar draws an indexing run's progress on one terminal line.
type progressBar struct {
	w     io.Writer
	label string
	mu    sync.Mutex
	drawn bool
}

// barWidth is the bar's width in cells.
const barWidth = 30

// update draws p; a nil bar draws nothing.
func (b *progressBar) update(p kb.Progress) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	filled := 0
	if p.Total > 0 {
		filled = min(barWidth, p.Done*barWidth/p.Total)
	}
	path := p.Path
	if len(path) > 40 {
		path = "…" + path[len(path)-39:]
	}
	fmt.Fprintf(b.w, "\r\x1b[K%s [%s%s] %d/%d files, %s %s", b.label, strings.Repeat("█", filled),
		strings.Repeat("·", barWidth-filled), p.Done, p.Total, humanSize(p.Bytes), path)
	b.drawn = true
}

// clear removes the bar's line.
func (b *progressBar) clear() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.drawn {
		fmt.Fprint(b.w, "\r\x1b[K")
	}
}
