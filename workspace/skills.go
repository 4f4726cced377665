package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// skillNameRE is a valid skill name (the Agent Skills format): lowercase
// letters, digits and hyphens, at most 64.
var skillNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9-]{1,64}$`) })

// maxSkillDescription bounds a skill's description, in characters.
const maxSkillDescription = 1024

// parseSkill reads a SKILL.md: frontmatter with name (default: dirName),
// description and optionally allowed-tools. The body is not kept:
// [Skill.Body] reads it when the skill is used.
func parseSkill(path string, data []byte, dirName string) (sk Skill, probs []Problem, ok bool) {
	d := &doc{path: path}
	m, _, ok := d.frontmatter(data, "a skill needs a description")
	if !ok {
		return Skill{}, d.probs, false
	}
	sk = Skill{Path: path}
	at, _ := m.get("name")
	if at == nil {
		at = m.node
	}
	if sk.Name = m.str("name"); sk.Name == "" {
		sk.Name = dirName
	}
	if !skillNameRE().MatchString(sk.Name) {
		d.problem(at, "skill name %q is not valid: use 1 to 64 lowercase letters, digits and hyphens (the skill is not loaded)", sk.Name)
		return Skill{}, d.probs, false
	}
	sk.Description = m.str("description")
	if sk.Description == "" {
		d.problem(at, "skill %s has no description: add description: saying what it does and when to use it (the skill is not loaded)", sk.Name)
		return Skill{}, d.probs, false
	}
	if r := []rune(sk.Description); len(r) > maxSkillDescription {
		n, _ := m.get("description")
		d.problem(n, "description: longer than %d characters; cut to %d (move detail into the body, read when the skill is used)", maxSkillDescription, maxSkillDescription)
		sk.Description = string(r[:maxSkillDescription])
	}
	sk.AllowedTools, _ = m.list("allowed-tools", "allowed_tools")
	return sk, d.probs, true
}

// skills reads the */SKILL.md of a skills directory.
func (s *scope) skills(dir string) []Skill {
	real, entries, ok := s.dir(dir)
	if !ok {
		return nil
	}
	return readEach(s, entries, func(s *scope, e fs.DirEntry) (Skill, bool) {
		name := e.Name()
		link := e.Type()&fs.ModeSymlink != 0
		if strings.HasPrefix(name, ".") || (!e.IsDir() && !link) {
			return Skill{}, false
		}
		sd := filepath.Join(dir, name)
		data, path, ok := s.defFile(real, sd, name, link, skillFile)
		if !ok {
			return Skill{}, false
		}
		sk, probs, ok := parseSkill(path, data, name)
		s.add(probs)
		sk.Dir, sk.Root, sk.Origin = sd, s.root, s.origin
		return sk, ok
	})
}

// defFile reads the definition file (SKILL.md, ACTION.yaml) of the entry
// name of a directory whose real path is dirReal; sd is the entry's path
// as shown, link whether it is a symbolic link. ok is false when there is
// nothing to load: a link to a file, or a problem.
func (s *scope) defFile(dirReal, sd, name string, link bool, file string) (data []byte, path string, ok bool) {
	path = filepath.Join(sd, file)
	sdReal, err := s.resolve(dirReal, name, link)
	if err != nil {
		s.problem(sd, 0, "%v", err)
		return nil, "", false
	}
	if link {
		s.t.lookup(sdReal)
		if fi, err := os.Stat(sdReal); err != nil || !fi.IsDir() {
			return nil, "", false
		}
	}
	data, err = s.readIn(sdReal, file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.problem(sd, 0, "no %s in this directory: add one, or move the directory elsewhere", file)
		return nil, "", false
	case err != nil:
		s.problem(path, 0, "%v", err)
		return nil, "", false
	}
	return data, path, true
}
