package skill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/tool"
)

// write creates files under dir: name → content.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func body(s string) func() (string, error) { return func() (string, error) { return s, nil } }

// pdfSkill is a skill written for Claude Code (Agent Skills format): its
// body names its files by relative path.
func pdfSkill(t *testing.T) Skill {
	dir := filepath.Join(t.TempDir(), "pdf")
	write(t, dir, map[string]string{
		"SKILL.md":          "---\nname: pdf\ndescription: Fill PDF forms.\n---\n# PDF\n",
		"reference.md":      "# Reference\nFields are named.\n",
		"scripts/fill.py":   "print('fill')\n",
		"forms/a/b/deep.md": "deep\n",
		".git/config":       "[core]\n",
		".env":              "TOKEN=secret\n",
	})
	return Skill{
		Name: "pdf", Description: "Fill PDF forms.", Dir: dir, AllowedTools: []string{"bash", "read_file"},
		Body: body("# PDF\nRun `python scripts/fill.py` from ${runtime:skill_dir}; see reference.md.\n" +
			"Model: ${config:model}. Token: ${env:API_TOKEN}. Shell: ${HOME}.\n"),
	}
}

func run(t *testing.T, tl tool.Tool, input string) tool.Result {
	t.Helper()
	set, err := tool.NewSet(tool.OriginBuiltin, tl)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := set.Get(ToolName)
	if err := e.Schema.Validate(json.RawMessage(input)); err != nil {
		return tool.Errorf("invalid: %v", err)
	}
	r, err := tl.Run(context.Background(), tool.Call{ID: "c1", Name: ToolName, Input: json.RawMessage(input)})
	if err != nil {
		t.Fatalf("Run(%s): %v", input, err)
	}
	return r
}

func TestToolMeta_SKILL2(t *testing.T) {
	tl := NewTool(nil, nil)
	want := tool.Meta{ReadOnly: true, ConcurrencySafe: true, Category: tool.CategorySession}
	if diff := cmp.Diff(want, tool.MetaOf(tl)); diff != "" {
		t.Errorf("Meta -want +got:\n%s", diff)
	}
	if tl.Spec().Name != "skill" {
		t.Errorf("name %q", tl.Spec().Name)
	}
	a, _ := json.Marshal(tl.Spec())
	b, _ := json.Marshal(NewTool([]Skill{{Name: "x"}}, nil).Spec())
	if string(a) != string(b) {
		t.Errorf("the spec depends on the skills; it should not:\n%s\n%s", a, b)
	}
}

func TestLoadSkill_SKILL2(t *testing.T) {
	s := pdfSkill(t)
	vars := func(got Skill) Vars {
		if got.Name != "pdf" {
			t.Errorf("vars called for %q", got.Name)
		}
		return Vars{Config: func(k string) (string, bool) { return "claude-sonnet-4-5", k == "model" }}
	}
	r := run(t, NewTool([]Skill{s}, vars), `{"name":"pdf"}`)
	if r.IsError {
		t.Fatalf("error: %s", r.TextOf())
	}
	want := fmt.Sprintf("Skill \"pdf\" loaded. Its directory is %[1]s; files are relative to it; "+
		"read them with this tool's file parameter or read_file.\n"+
		"Tools it uses: bash, read_file.\n"+
		"Files:\n- SKILL.md\n- forms/a/b/deep.md\n- reference.md\n- scripts/fill.py\n\n"+
		"# PDF\nRun `python scripts/fill.py` from %[1]s; see reference.md.\n"+
		"Model: claude-sonnet-4-5. Token: [env:API_TOKEN not available]. Shell: ${HOME}.", s.Dir)
	if diff := cmp.Diff(want, r.TextOf()); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	if r.Metadata["skill"] != "pdf" || r.Metadata["files"] != 4 {
		t.Errorf("metadata %v", r.Metadata)
	}
	// Inside the workspace, the directory is named relative to it: shorter,
	// and the same wherever the workspace is cloned (a cassette replays).
	res, err := NewTool([]Skill{s}, vars).Run(context.Background(),
		tool.Call{ID: "c", Name: ToolName, Input: []byte(`{"name":"pdf"}`), WorkDir: filepath.Dir(s.Dir)})
	if err != nil || !strings.HasPrefix(res.TextOf(), `Skill "pdf" loaded. Its directory is pdf; files are relative to it;`) {
		t.Errorf("inside the workspace: %v %q", err, res.TextOf())
	}
}

// A caller's runtime values win over the tool's defaults; a nil vars
// still fills skill_dir and skill_name.
func TestLoadRuntimeDefaults_SKILL2(t *testing.T) {
	s := Skill{Name: "n", Body: body("${runtime:skill_name} ${runtime:skill_dir} ${runtime:session_id}")}
	if got := run(t, NewTool([]Skill{s}, nil), `{"name":"n"}`).TextOf(); !strings.HasSuffix(got, "\nn  [runtime:session_id not available]") {
		t.Errorf("got %q", got)
	}
	vars := func(Skill) Vars { return Vars{Runtime: map[string]string{"skill_dir": "/x", "session_id": "s9"}} }
	if got := run(t, NewTool([]Skill{s}, vars), `{"name":"n"}`).TextOf(); !strings.HasSuffix(got, "\nn /x s9") {
		t.Errorf("got %q", got)
	}
}

func TestLoadErrors_SKILL2(t *testing.T) {
	broken := Skill{Name: "broken", Body: func() (string, error) { return "", errors.New("disk gone") }}
	skills := []Skill{pdfSkill(t), {Name: "xlsx"}, {Name: "docx"}, broken, {Name: "Mixed"}}
	tl := NewTool(skills, nil)
	cases := []struct{ input, want string }{
		{`{"name":"pfd"}`, `unknown skill "pfd"; did you mean "pdf"? The skills are: Mixed, broken, docx, pdf, xlsx`},
		{`{"name":""}`, "name is empty; give one of the skills: Mixed, broken, docx, pdf, xlsx"},
		{`{"name":"broken"}`, "skill broken: its instructions could not be read: disk gone"},
		{`{}`, "invalid: "},
	}
	for _, c := range cases {
		r := run(t, tl, c.input)
		if !r.IsError || !strings.Contains(r.TextOf(), c.want) {
			t.Errorf("%s: got %v %q, want an error with %q", c.input, r.IsError, r.TextOf(), c.want)
		}
	}
	if r := run(t, NewTool(nil, nil), `{"name":"pdf"}`); !r.IsError || !strings.Contains(r.TextOf(), "no skills") {
		t.Errorf("no skills: %q", r.TextOf())
	}
	if r := run(t, tl, `{"name":"mixed"}`); r.IsError || !strings.HasPrefix(r.TextOf(), `Skill "Mixed" loaded.`) {
		t.Errorf("case-insensitive lookup: %q", r.TextOf())
	}
}

func TestReadFile_SKILL2(t *testing.T) {
	s := pdfSkill(t)
	tl := NewTool([]Skill{s}, nil)
	r := run(t, tl, `{"name":"pdf","file":"reference.md"}`)
	want := fmt.Sprintf("File reference.md of skill pdf (%s):\n\n# Reference\nFields are named.\n", filepath.Join(s.Dir, "reference.md"))
	if r.IsError || r.TextOf() != want {
		t.Errorf("got %v %q, want %q", r.IsError, r.TextOf(), want)
	}
	for _, in := range []string{"scripts/fill.py", "./scripts/fill.py", "scripts//fill.py", "forms/a/b/deep.md"} {
		if r := run(t, tl, fmt.Sprintf(`{"name":"pdf","file":%q}`, in)); r.IsError {
			t.Errorf("%s: %s", in, r.TextOf())
		}
	}
	// Body placeholders in a file are not expanded: files are raw.
	write(t, s.Dir, map[string]string{"raw.sh": "echo ${env:HOME}\n"})
	if got := run(t, tl, `{"name":"pdf","file":"raw.sh"}`).TextOf(); !strings.HasSuffix(got, "echo ${env:HOME}\n") {
		t.Errorf("raw file changed: %q", got)
	}
}

// Attempts to read outside the skill's directory are refused, symlinks
// resolved.
func TestReadFileEscapes_SKILL2(t *testing.T) {
	s := pdfSkill(t)
	outside := t.TempDir()
	write(t, outside, map[string]string{"secret.txt": "top secret\n"})
	links := map[string]string{
		"passwd":   "/etc/passwd",
		"outdir":   outside,
		"abs.txt":  filepath.Join(outside, "secret.txt"),
		"rel.txt":  "../../" + filepath.Base(outside) + "/secret.txt",
		"loop":     "loop",
		"dangling": filepath.Join(outside, "missing"),
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(s.Dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	tl := NewTool([]Skill{s}, nil)
	cases := []struct{ file, want string }{
		{"../pdf/reference.md", `".." is refused`},
		{"scripts/../../x", `".." is refused`},
		{`scripts\..\..\x`, `".." is refused`},
		{"..", `".." is refused`},
		{"/etc/passwd", "absolute paths are refused"},
		{filepath.Join(s.Dir, "reference.md"), "absolute paths are refused"},
		{"a\x00b", "NUL"},
		{"passwd", "leads outside the skill's directory"},
		{"outdir/secret.txt", "leads outside the skill's directory"},
		{"abs.txt", "leads outside the skill's directory"},
		{"rel.txt", "leads outside the skill's directory"},
		{"loop", "loop"},
		{"dangling", "has no file"},
		{".env", "sensitive file"},
		{"nope.md", `has no file "nope.md"; did you mean`},
		{"scripts", "is a directory"},
		{".", "is a directory"},
	}
	for _, c := range cases {
		in, _ := json.Marshal(map[string]string{"name": "pdf", "file": c.file})
		r := run(t, tl, string(in))
		if !r.IsError || !strings.Contains(r.TextOf(), c.want) {
			t.Errorf("file %q: got %v %q, want an error with %q", c.file, r.IsError, r.TextOf(), c.want)
		}
		if strings.Contains(r.TextOf(), "top secret") || strings.Contains(r.TextOf(), "root:") {
			t.Errorf("file %q leaked: %q", c.file, r.TextOf())
		}
	}
	// The listing leaves out what escapes, what is sensitive, and hidden directories.
	got := run(t, tl, `{"name":"pdf"}`).TextOf()
	for _, bad := range []string{"passwd", "outdir", "abs.txt", "rel.txt", "loop", "dangling", ".env", ".git"} {
		if strings.Contains(got, "- "+bad) {
			t.Errorf("listing shows %s:\n%s", bad, got)
		}
	}
}

// A skill directory that is itself a symlink works, and a symlink inside it
// that stays inside is followed.
func TestSymlinkedSkillDir_SKILL2(t *testing.T) {
	real := pdfSkill(t)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real.Dir, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("reference.md", filepath.Join(real.Dir, "ref-link.md")); err != nil {
		t.Fatal(err)
	}
	s := real
	s.Dir = link
	tl := NewTool([]Skill{s}, nil)
	for _, f := range []string{"reference.md", "ref-link.md"} {
		if r := run(t, tl, fmt.Sprintf(`{"name":"pdf","file":%q}`, f)); r.IsError || !strings.Contains(r.TextOf(), "Fields are named") {
			t.Errorf("%s: %v %q", f, r.IsError, r.TextOf())
		}
	}
	if got := run(t, tl, `{"name":"pdf"}`).TextOf(); !strings.Contains(got, "- ref-link.md\n") {
		t.Errorf("inside symlink not listed:\n%s", got)
	}
}

func TestReadBigAndBinary_SKILL2(t *testing.T) {
	s := pdfSkill(t)
	line := strings.Repeat("x", 99) + "\n"
	big := strings.Repeat(line, 3000) // 300,000 bytes
	write(t, s.Dir, map[string]string{"big.txt": big, "bin.dat": "PK\x03\x04\x00\x00binary", "latin1.txt": "caf\xe9\n"})
	tl := NewTool([]Skill{s}, nil)
	r := run(t, tl, `{"name":"pdf","file":"big.txt"}`)
	text := r.TextOf()
	if r.IsError || r.Metadata["truncated"] != true || r.Metadata["bytes"] != int64(len(big)) {
		t.Fatalf("big: %v %v", r.IsError, r.Metadata)
	}
	if len(text) > MaxFileBytes+1000 || !strings.Contains(text, "[… truncated: the file has 300000 bytes") ||
		!strings.Contains(text, "read_file on "+filepath.Join(s.Dir, "big.txt")) {
		t.Errorf("big: %d bytes, tail %q", len(text), text[len(text)-300:])
	}
	if !strings.Contains(text, strings.Repeat("x", 99)+"\n\n\n[…") {
		t.Errorf("the cut should fall at a line end")
	}
	if r := run(t, tl, `{"name":"pdf","file":"bin.dat"}`); !r.IsError || !strings.Contains(r.TextOf(), "binary") {
		t.Errorf("binary: %v %q", r.IsError, r.TextOf())
	}
	if r := run(t, tl, `{"name":"pdf","file":"latin1.txt"}`); r.IsError || !strings.HasSuffix(r.TextOf(), "caf\uFFFD\n") {
		t.Errorf("latin1: %v %q", r.IsError, r.TextOf())
	}
}

func TestListManyFiles_SKILL2(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 80 {
		files[fmt.Sprintf("f%03d.md", i)] = "x"
	}
	write(t, dir, files)
	r := run(t, NewTool([]Skill{{Name: "many", Dir: dir}}, nil), `{"name":"many"}`)
	got := r.TextOf()
	if n := strings.Count(got, "\n- f"); n != MaxListedFiles {
		t.Errorf("%d files listed, want %d", n, MaxListedFiles)
	}
	if !strings.Contains(got, "more files not listed") || strings.Contains(got, "f050.md") || !strings.Contains(got, "f049.md") {
		t.Errorf("listing:\n%s", got)
	}
}

// A skill without a directory (a built-in one) loads, and has no files.
func TestSkillWithoutDir_SKILL2(t *testing.T) {
	tl := NewTool([]Skill{{Name: "b", Body: body("do it")}}, nil)
	if got := run(t, tl, `{"name":"b"}`).TextOf(); got != "Skill \"b\" loaded.\n\ndo it" {
		t.Errorf("got %q", got)
	}
	if r := run(t, tl, `{"name":"b","file":"x"}`); !r.IsError || !strings.Contains(r.TextOf(), "no directory") {
		t.Errorf("got %q", r.TextOf())
	}
}
