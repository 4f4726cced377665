package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/reinhq/rein/attachment"
	"github.com/reinhq/rein/fileindex"
)

// pickerLimit is how many matches the @ picker keeps.
const pickerLimit = 50

// refreshEvery is how old the file index may be when the picker opens
// before it is refreshed (in the background; the old list serves until
// then).
const refreshEvery = 3 * time.Second

// ExcerptReader is a [Backend] that reads the lines a mention names
// (@file#20-45, SPEC CLI-6) under its permission policy: a file outside
// the workspace or one the policy keeps from the model is refused.
type ExcerptReader interface {
	Excerpt(ctx context.Context, path string, r fileindex.Range) (string, error)
}

// filesIndexedMsg says a refresh of the file index ended.
type filesIndexedMsg struct{ err error }

// fileItems are the @ picker's matches for query; note says why there are
// none yet (the index is being built).
func (m *model) fileItems(query string) (items []popupItem, more bool, note string) {
	ix := m.opts.Files
	if strings.Contains(query, "#") {
		return nil, false, "" // lines are being typed: the path is chosen
	}
	query = strings.TrimPrefix(query, `"`)
	if ix.Refreshed().IsZero() {
		return nil, false, "indexing the workspace's files…"
	}
	hits, total := ix.Search(query, pickerLimit)
	for _, h := range hits {
		if h.Path == query {
			continue // the directory typed in full: its entries are what is wanted
		}
		insert := "@" + h.Path
		if strings.ContainsAny(h.Path, " \t") {
			insert = `@"` + h.Path + `"`
		}
		items = append(items, popupItem{label: h.Path, insert: insert})
	}
	if len(items) == 0 {
		note = "no file matches @" + query
	}
	return items, total > len(hits), note
}

// refreshFiles refreshes the file index in the background when it is
// older than refreshEvery and no refresh runs.
func (m *model) refreshFiles() tea.Cmd {
	ix := m.opts.Files
	if ix == nil || m.indexing || (!ix.Refreshed().IsZero() && m.now().Sub(ix.Refreshed()) < refreshEvery) {
		return nil
	}
	m.indexing = true
	ctx := m.ctx
	return func() tea.Msg {
		_, err := ix.Refresh(ctx)
		return filesIndexedMsg{err}
	}
}

// onFilesIndexed shows the fresh matches when the picker is open.
func (m *model) onFilesIndexed(msg filesIndexedMsg) tea.Cmd {
	m.indexing = false
	if msg.err != nil && m.ctx.Err() == nil {
		return m.setNotice("the @ picker could not list the files: " + msg.err.Error())
	}
	if m.popup.kind == '@' {
		m.popup.token = "" // recompute
		m.refreshPopup()
	}
	return nil
}

// expandRanges adds to a prompt the lines its @file#20-45 mentions name,
// read by the backend; an error says which mention is wrong.
func (m *model) expandRanges(text string) (string, error) {
	var excerpts []string
	for _, mn := range attachment.Mentions(text) {
		file, r, ok, err := fileindex.ParseRange(mn.Path)
		if err != nil {
			return "", fmt.Errorf("@%s: %v", mn.Path, err)
		}
		if !ok {
			continue
		}
		er, can := m.backend.(ExcerptReader)
		if !can {
			return "", fmt.Errorf("@%s: this session cannot read lines of files; mention the file without #", mn.Path)
		}
		lines, err := er.Excerpt(m.ctx, file, r)
		if err != nil {
			return "", fmt.Errorf("@%s: %v", mn.Path, err)
		}
		excerpts = append(excerpts, fmt.Sprintf("<file path=%q lines=\"%d-%d\">\n%s</file>", file, r.Start, r.End, lines))
	}
	if len(excerpts) == 0 {
		return text, nil
	}
	return text + "\n\n" + strings.Join(excerpts, "\n"), nil
}
