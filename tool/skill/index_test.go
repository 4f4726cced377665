package skill

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestIndex_SKILL1(t *testing.T) {
	if got := Index(nil); got != "" {
		t.Errorf("Index(nil) = %q, want empty", got)
	}
	body := func() (string, error) { t.Error("Index read a body"); return "", nil }
	got := Index([]Skill{
		{Name: "xlsx", Description: "Spreadsheets:\n  read, write,\tchart.", Body: body, AllowedTools: []string{"bash"}},
		{Name: "pdf", Description: "Fill PDF forms; extract text.", Body: body, Dir: "/ws/.rein/skills/pdf"},
		{Name: "bare", Body: body},
	})
	want := "# Skills\n" +
		"Before a task that matches a skill's description, call the skill tool with its name and follow the instructions it returns.\n" +
		"- bare\n" +
		"- pdf: Fill PDF forms; extract text.\n" +
		"- xlsx: Spreadsheets: read, write, chart.\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Index -want +got:\n%s", diff)
	}
	if strings.Contains(got, "/ws/") || strings.Contains(got, "bash") {
		t.Errorf("the index holds more than names and descriptions:\n%s", got)
	}
}

// The same skills give the same bytes, whatever their order (SPEC PROV-6:
// the system prompt is a cache prefix).
func TestIndexDeterministic_SKILL1(t *testing.T) {
	skills := realisticSkills(40)
	skills = append(skills, Skill{Name: "dup", Description: "b"}, Skill{Name: "dup", Description: "a"})
	want := Index(skills)
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		r.Shuffle(len(skills), func(i, j int) { skills[i], skills[j] = skills[j], skills[i] })
		if got := Index(skills); got != want {
			t.Fatalf("the index changed with the order of the skills:\n%s", cmp.Diff(want, got))
		}
	}
}

// A description is one line and at most 1,024 characters; the index grows
// by one short line per skill.
func TestIndexSize_SKILL1(t *testing.T) {
	long := strings.Repeat("word ", 1000)
	got := Index([]Skill{{Name: "long", Description: long}})
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	last := lines[len(lines)-1]
	if n := utf8.RuneCountInString(strings.TrimPrefix(last, "- long: ")); n > maxIndexDescription {
		t.Errorf("description of %d characters in the index, want at most %d", n, maxIndexDescription)
	}
	if !strings.HasSuffix(last, "…") {
		t.Errorf("a cut description should end with …: %q", last[len(last)-20:])
	}
	one := len(Index(realisticSkills(1)))
	hundred := len(Index(realisticSkills(100)))
	if per := (hundred - one) / 99; per > 220 {
		t.Errorf("%d bytes per skill in the index; want a compact line (name + ~150-character description)", per)
	}
	if strings.Count(Index(realisticSkills(100)), "\n") != 102 {
		t.Errorf("want a two-line heading and one line per skill")
	}
}

// realisticSkills makes n skills with ~150-character descriptions, as the
// Agent Skills examples have.
func realisticSkills(n int) []Skill {
	topics := []string{"PDF forms", "Excel spreadsheets", "Word documents", "PowerPoint decks", "database migrations",
		"release notes", "API clients", "Terraform modules", "Kubernetes manifests", "SQL reports"}
	out := make([]Skill, n)
	for i := range out {
		topic := topics[i%len(topics)]
		out[i] = Skill{
			Name: fmt.Sprintf("%s-%03d", strings.ToLower(strings.Fields(topic)[0]), i),
			Description: fmt.Sprintf("Create, edit and review %s: extract content, fill fields, validate the result "+
				"and fix common errors. Use when the user works with %s.", topic, topic),
		}
	}
	return out
}

// BenchmarkIndex100 builds the index of 100 skills with ~150-character
// descriptions and reports its size in bytes (index_bytes).
func BenchmarkIndex100(b *testing.B) {
	skills := realisticSkills(100)
	var n int
	for b.Loop() {
		n = len(Index(skills))
	}
	b.ReportMetric(float64(n), "index_bytes")
	b.ReportMetric(float64(n)/100, "bytes/skill")
}
