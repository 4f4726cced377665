package builtin

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/reinhq/rein/tool"
)

// Statuses of a todo item.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoCompleted  = "completed"
)

// TodoItem is one entry of the todo list.
type TodoItem struct {
	ID      string `json:"id,omitempty"`
	Content string `json:"content"`
	Status  string `json:"status"`
}

// Todos holds a session's todo list. It is safe for concurrent use; the zero
// value is an empty list.
type Todos struct {
	mu    sync.Mutex
	items []TodoItem
}

// List returns a copy of the list.
func (t *Todos) List() []TodoItem {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]TodoItem(nil), t.items...)
}

// Set replaces the list, for a session that resumes.
func (t *Todos) Set(items []TodoItem) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.items = append([]TodoItem(nil), items...)
}

var todoSchema = tool.NewStaticSchema[todoIn](func(sc *jsonschema.Schema) {
	enum(prop(prop(sc, "todos").Items, "status"), TodoPending, TodoInProgress, TodoCompleted)
})

type todoIn struct {
	Todos []TodoItem `json:"todos"`
}

const todoDesc = "Keeps a todo list for multi-step work; send the whole list each time. Mark one item " +
	"in_progress before starting it, completed as soon as it is done."

// NewTodoWrite returns the todo_write tool, keeping the list in s.
func NewTodoWrite(s *Todos) tool.Tool {
	return tool.DefineStatic("todo_write", todoDesc, tool.Meta{ReadOnly: true, Category: tool.CategorySession},
		todoSchema, func(ctx context.Context, call tool.Call, in todoIn) (tool.Result, error) {
			items, err := checkTodos(in.Todos)
			if err != nil {
				return tool.Errorf("%v", err), nil
			}
			s.Set(items)
			r := tool.Text(formatTodos(items))
			r.Metadata = map[string]any{"todos": items}
			return r, nil
		})
}

// checkTodos validates a list and fills in missing ids.
func checkTodos(in []TodoItem) ([]TodoItem, error) {
	items := make([]TodoItem, len(in))
	seen := map[string]bool{}
	active := 0
	for i, it := range in {
		it.Content = strings.TrimSpace(it.Content)
		if it.ID == "" {
			it.ID = strconv.Itoa(i + 1)
		}
		switch {
		case it.Content == "":
			return nil, fmt.Errorf("todo %d has no content", i+1)
		case it.Status != TodoPending && it.Status != TodoInProgress && it.Status != TodoCompleted:
			return nil, fmt.Errorf("todo %d: status must be pending, in_progress or completed, not %q", i+1, it.Status)
		case seen[it.ID]:
			return nil, fmt.Errorf("todo id %q is used twice; ids must be unique", it.ID)
		}
		seen[it.ID] = true
		if it.Status == TodoInProgress {
			active++
		}
		items[i] = it
	}
	if active > 1 {
		return nil, fmt.Errorf("%d items are in_progress; at most one may be: finish one first or mark the others pending", active)
	}
	return items, nil
}

// formatTodos echoes the list compactly.
func formatTodos(items []TodoItem) string {
	if len(items) == 0 {
		return "Todo list cleared."
	}
	counts := map[string]int{}
	var b strings.Builder
	for _, it := range items {
		counts[it.Status]++
		mark := "[ ]"
		switch it.Status {
		case TodoInProgress:
			mark = "[>]"
		case TodoCompleted:
			mark = "[x]"
		}
		fmt.Fprintf(&b, "%s %s: %s\n", mark, it.ID, it.Content)
	}
	return fmt.Sprintf("Todo list (%d completed, %d in progress, %d pending):\n%s",
		counts[TodoCompleted], counts[TodoInProgress], counts[TodoPending], b.String())
}
