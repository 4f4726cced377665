package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/mirror"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/sqlite"
)

// runMirrorCmd runs `rein mirror …` as App.Run does, with the command
// added to a root of its own (the tree in app.go registers it too).
func runMirrorCmd(te *testEnv, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	a := te.app(&out, &errb)
	root := &cobra.Command{Use: "rein", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(a.mirrorCommand())
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	err := root.ExecuteContext(context.Background())
	var ee *exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.code
		fmt.Fprintf(&errb, "rein: %s\n", ee.msg)
	default:
		code = ExitUsage
		fmt.Fprintf(&errb, "rein: %v\n", err)
	}
	return code, out.String(), errb.String()
}

// serverWithSessions writes a server database under dataDir holding a
// project workspace of dir with two sessions, and a chat workspace; it
// returns the project workspace and the chat one's id.
func serverWithSessions(t *testing.T, dataDir, dir string) (*session.Workspace, string) {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(dataDir, "rein.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	ws := &session.Workspace{Caller: "local", Kind: session.WorkspaceProject, Dir: dir}
	chat := &session.Workspace{Caller: "local", Kind: session.WorkspaceChat}
	for _, w := range []*session.Workspace{ws, chat} {
		if err := db.CreateWorkspace(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		s := &session.Session{Caller: "local", Workspace: ws.ID, WorkDir: dir, Title: fmt.Sprint("session ", i)}
		if err := db.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		m := llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.Text{Text: "hello"}}}
		if _, err := db.Append(ctx, s.ID, session.Entry{Kind: session.KindMessage, Message: &m},
			session.Entry{Kind: session.KindFocus, Focus: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	return ws, chat.ID
}

func TestMirrorRebuildCommand_API6(t *testing.T) {
	te := newTestEnv(t)
	dir, err := filepath.EvalSymlinks(te.ws)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, ".rein"), 0o755); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(te.home, "server")
	ws, chatID := serverWithSessions(t, dataDir, dir)
	mirror := filepath.Join(dir, mirror.File)

	for _, args := range [][]string{
		{"mirror", "rebuild", "--data-dir", dataDir},                       // the current directory
		{"mirror", "rebuild", "--data-dir", dataDir, "--workspace", ws.ID}, // by id
		{"mirror", "rebuild", "--data-dir", dataDir, "--workspace", "."},   // by directory
	} {
		code, out, errs := runMirrorCmd(te, args...)
		if code != ExitOK {
			t.Fatalf("rein %s: exit %d\n%s", strings.Join(args, " "), code, errs)
		}
		if want := fmt.Sprintf("rebuilt %s: 2 session(s), 4 entries\n", mirror); out != want {
			t.Errorf("rein %s: stdout %q, want %q", strings.Join(args, " "), out, want)
		}
	}
	src, err := sqlite.Open(filepath.Join(dataDir, "rein.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := sqlite.Open(mirror, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	ctx := context.Background()
	want, _, err := src.List(ctx, session.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := dst.List(ctx, session.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(jsonLines(t, want), jsonLines(t, got)); d != "" {
		t.Errorf("mirrored sessions (-store +mirror):\n%s", d)
	}
	for _, s := range want {
		if d := cmp.Diff(logOf(t, src, s.ID), logOf(t, dst, s.ID)); d != "" {
			t.Errorf("session %s: entries (-store +mirror):\n%s", s.ID, d)
		}
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"mirror", "rebuild", "--data-dir", t.TempDir()}, ExitError, "no server database in"},
		{[]string{"mirror", "rebuild", "--data-dir", dataDir, "--workspace", "./nope"}, ExitUsage, "no such directory"},
		{[]string{"mirror", "rebuild", "--data-dir", dataDir, "--workspace", chatID}, ExitError, "only project workspaces"},
		{[]string{"mirror", "rebuild", "--data-dir", dataDir, "--workspace", "nosuchid"}, ExitError, "workspace nosuchid"},
		{[]string{"mirror", "rebuild", "--data-dir", dataDir, "--workspace", te.home}, ExitError, "no .rein directory"},
	} {
		code, _, errs := runMirrorCmd(te, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("rein %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), code, errs, tc.code, tc.want)
		}
	}
}

func jsonLines[T any](t *testing.T, vs []T) []string {
	t.Helper()
	var out []string
	for _, v := range vs {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

func logOf(t *testing.T, s session.Store, id string) []string {
	t.Helper()
	var es []session.Entry
	for e, err := range s.Entries(context.Background(), id, 0) {
		if err != nil {
			t.Fatal(err)
		}
		es = append(es, e)
	}
	return jsonLines(t, es)
}
