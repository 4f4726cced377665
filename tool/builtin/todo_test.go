package builtin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/tool"
)

func TestTodoWrite(t *testing.T) {
	var store Todos
	tw := NewTodoWrite(&store)
	res := runTool(t, tw, "", map[string]any{"todos": []map[string]any{
		{"content": "read the code", "status": "completed"},
		{"content": "write the fix", "status": "in_progress", "id": "fix"},
		{"content": "run tests", "status": "pending"},
	}})
	want := "Todo list (1 completed, 1 in progress, 1 pending):\n[x] 1: read the code\n[>] fix: write the fix\n[ ] 3: run tests\n"
	if diff := cmp.Diff(want, res.TextOf()); diff != "" || res.IsError {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	list := store.List()
	if len(list) != 3 || list[1].ID != "fix" || list[0].ID != "1" {
		t.Fatalf("store %+v", list)
	}
	list[0].Content = "changed"
	if store.List()[0].Content != "read the code" {
		t.Fatal("List returned the store's own slice")
	}

	tests := []struct {
		todos []map[string]any
		want  string
	}{
		{[]map[string]any{{"content": "a", "status": "in_progress"}, {"content": "b", "status": "in_progress"}}, "at most one"},
		{[]map[string]any{{"content": " ", "status": "pending"}}, "no content"},
		{[]map[string]any{{"content": "a", "status": "pending", "id": "x"}, {"content": "b", "status": "pending", "id": "x"}}, "used twice"},
	}
	for _, tt := range tests {
		mustContain(t, runTool(t, tw, "", map[string]any{"todos": tt.todos}), true, tt.want)
	}
	if len(store.List()) != 3 {
		t.Fatal("a refused list replaced the store")
	}
	mustContain(t, runTool(t, tw, "", map[string]any{"todos": []any{}}), false, "cleared")
}

// The schema refuses an unknown status before the tool runs.
func TestTodoSchemaEnum(t *testing.T) {
	tw := NewTodoWrite(&Todos{})
	s := tw.Spec().InputSchema
	if !strings.Contains(string(s), `"enum":["pending","in_progress","completed"]`) {
		t.Fatalf("schema lacks the status enum: %s", s)
	}
}

func TestAskUser(t *testing.T) {
	mustContain(t, runTool(t, NewAskUser(nil), "", map[string]any{"question": "Which DB?"}), true, "best judgement")
	var gotQ string
	var gotOpts []string
	a := AskerFunc(func(ctx context.Context, q string, opts []string) (string, error) {
		gotQ, gotOpts = q, opts
		switch q {
		case "fail?":
			return "", errors.New("terminal closed")
		case "silent?":
			return " ", nil
		case "declined?":
			return "", fmt.Errorf("esc: %w", ErrDeclined)
		}
		return "postgres", nil
	})
	au := NewAskUser(a)
	mustContain(t, runTool(t, au, "", map[string]any{"question": "Which DB?", "options": []string{"sqlite", "postgres"}}), false, "The user answered: postgres")
	if gotQ != "Which DB?" || !cmp.Equal(gotOpts, []string{"sqlite", "postgres"}) {
		t.Errorf("asked %q %v", gotQ, gotOpts)
	}
	mustContain(t, runTool(t, au, "", map[string]any{"question": "fail?"}), true, "terminal closed", "best judgement")
	mustContain(t, runTool(t, au, "", map[string]any{"question": "silent?"}), false, "no answer")
	mustContain(t, runTool(t, au, "", map[string]any{"question": "declined?"}), false, "The user declined to answer", "best judgement")
}

// PERM-1: todo_write and ask_user declare that they have no effect outside
// the session, so the permission modes run them without asking.
func TestSessionToolsDeclareEffect_PERM1(t *testing.T) {
	for _, tl := range []tool.Tool{NewTodoWrite(&Todos{}), NewAskUser(nil)} {
		m := tool.MetaOf(tl)
		if !m.SessionOnly() || !m.ReadOnly {
			t.Errorf("%s: meta %+v, want read-only session tool", tl.Spec().Name, m)
		}
	}
}
