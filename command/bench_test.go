package command

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/attachment"
	"github.com/reinhq/rein/workspace"
)

// BenchmarkExpand expands a command of about 4 KiB with twenty
// placeholders and one pasted file: the cost a slash command adds before
// its run starts (the preludes' own time aside).
func BenchmarkExpand(b *testing.B) {
	root := b.TempDir()
	if err := os.WriteFile(filepath.Join(root, "style.md"), []byte(strings.Repeat("Use tabs.\n", 100)), 0o644); err != nil {
		b.Fatal(err)
	}
	body := strings.Repeat("Review $0 for $1 ($ARGUMENTS) and the rest of the change, carefully.\n", 20) +
		strings.Repeat("Some prose that holds no placeholder at all, as most of a command does.\n", 40) + "Follow @style.md."
	c := workspace.Command{Name: "review", Body: body}
	env := Env{Files: attachment.Resolver{Root: root}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Expand(ctx, c, `main "error handling"`, env); err != nil {
			b.Fatal(err)
		}
	}
}
