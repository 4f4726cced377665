package skill

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/suggest"
	"github.com/reinhq/rein/tool"
)

// Limits of the skill tool.
const (
	// MaxFileBytes is how much of a skill's file the tool returns; the rest
	// is cut, with a note saying how to read it.
	MaxFileBytes = 256 << 10
	// MaxListedFiles is how many of a skill's files the tool lists when it
	// loads the skill.
	MaxListedFiles = 50
)

type input struct {
	Name string `json:"name"`
	File string `json:"file,omitempty" jsonschema:"one of its files, relative to its directory"`
}

const description = "Loads a skill's instructions, or with file one of the files they mention."

// NewTool returns the `skill` tool over skills (SPEC SKILL-2). Its input is
// {"name": string, "file"?: string}. Without file it returns the skill's
// body with its references expanded ([Expand], with the Vars vars gives
// for the skill, nil giving none; runtime skill_dir and skill_name are
// filled in when vars leaves them out), after a header that names the
// skill, its directory and up to [MaxListedFiles] of its files. With file
// it returns that file, text only, at most [MaxFileBytes]; it refuses
// absolute paths, "..", sensitive files (.env, keys) and anything whose
// resolved path leaves the skill's directory. An unknown name gets an
// error result listing the skills there are. A name given twice keeps its
// first skill; a name differing only in case is found when it is the only
// such.
//
// The tool only reads what the skills bring, so it is read-only,
// concurrency-safe and of [tool.CategorySession]: it runs in every
// permission mode but strict. Calls may run in parallel, so vars and the
// skills' Body funcs must be safe for concurrent use.
func NewTool(skills []Skill, vars func(s Skill) Vars) tool.Tool {
	t := &skillTool{skills: map[string]Skill{}, vars: vars}
	for _, s := range skills {
		if _, dup := t.skills[s.Name]; !dup {
			t.skills[s.Name] = s
		}
	}
	t.names = slices.Sorted(maps.Keys(t.skills))
	meta := tool.Meta{ReadOnly: true, ConcurrencySafe: true, Category: tool.CategorySession}
	return tool.New(ToolName, description, meta, t.run)
}

type skillTool struct {
	skills map[string]Skill
	names  []string // sorted
	vars   func(Skill) Vars
}

func (t *skillTool) run(ctx context.Context, call tool.Call, in input) (tool.Result, error) {
	s, res := t.find(strings.TrimSpace(in.Name))
	if res != nil {
		return *res, nil
	}
	if strings.TrimSpace(in.File) == "" {
		return t.load(ctx, s, call.WorkDir), nil
	}
	return readFile(s, in.File, call.WorkDir), nil
}

// shown is how a result names path: relative to the workspace when it is
// inside it (shorter, and the same wherever the workspace is cloned),
// else as it is.
func shown(path, workDir string) string {
	if workDir == "" || path == "" {
		return path
	}
	rel, err := filepath.Rel(workDir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return path
	}
	return filepath.ToSlash(rel)
}

// find looks a skill up by name, exactly, else ignoring case when that
// finds one.
func (t *skillTool) find(name string) (Skill, *tool.Result) {
	if s, ok := t.skills[name]; ok {
		return s, nil
	}
	var folded []string
	for _, n := range t.names {
		if strings.EqualFold(n, name) {
			folded = append(folded, n)
		}
	}
	if len(folded) == 1 {
		return t.skills[folded[0]], nil
	}
	var r tool.Result
	switch {
	case len(t.names) == 0:
		r = tool.Errorf("unknown skill %q: there are no skills here", name)
	case name == "":
		r = tool.Errorf("name is empty; give one of the skills: %s", strings.Join(t.names, ", "))
	default:
		near := suggest.Closest(name, t.names, 1)
		r = tool.Errorf("unknown skill %q; did you mean %q? The skills are: %s", name, near[0], strings.Join(t.names, ", "))
	}
	r.Metadata = map[string]any{"skill": name, "unknown": true}
	return Skill{}, &r
}

// load returns the skill's body, expanded, after its header.
func (t *skillTool) load(ctx context.Context, s Skill, workDir string) tool.Result {
	body := ""
	if s.Body != nil {
		var err error
		if body, err = s.Body(); err != nil {
			r := tool.Errorf("skill %s: its instructions could not be read: %v", s.Name, err)
			r.Metadata = map[string]any{"skill": s.Name, "dir": s.Dir}
			return r
		}
	}
	var v Vars
	if t.vars != nil {
		v = t.vars(s)
	}
	rt := make(map[string]string, len(v.Runtime)+2)
	rt["skill_dir"], rt["skill_name"] = s.Dir, s.Name
	maps.Copy(rt, v.Runtime)
	v.Runtime = rt

	files, more := listFiles(ctx, s.Dir)
	var b strings.Builder
	fmt.Fprintf(&b, "Skill %q loaded.", s.Name)
	dir := shown(s.Dir, workDir)
	if s.Dir != "" {
		fmt.Fprintf(&b, " Its directory is %s; files are relative to it; read them with this tool's file parameter or read_file.", dir)
	}
	if len(s.AllowedTools) > 0 {
		fmt.Fprintf(&b, "\nTools it uses: %s.", strings.Join(s.AllowedTools, ", "))
	}
	if len(files) > 0 {
		b.WriteString("\nFiles:\n")
		for _, f := range files {
			b.WriteString("- " + f + "\n")
		}
		if more {
			fmt.Fprintf(&b, "(more files not listed: only the first %d are; list the rest with list_dir or glob in %s)\n", MaxListedFiles, dir)
		}
	} else {
		b.WriteByte('\n')
	}
	b.WriteString("\n")
	b.WriteString(strings.TrimSpace(Expand(body, v)))
	r := tool.Text(b.String())
	r.Metadata = map[string]any{"skill": s.Name, "dir": dir, "files": len(files)}
	if len(s.AllowedTools) > 0 {
		r.Metadata["allowed_tools"] = slices.Clone(s.AllowedTools)
	}
	return r
}
