package arch

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// libraryDoc is the page this file keeps true.
const libraryDoc = "../../docs/library.md"

// api is what a package declares, as docs/library.md may name it.
type api struct {
	dir   string          // relative to the module root
	names map[string]bool // Name, Type.Method, Type.Field (non-test files)
	tests map[string]bool // functions of the test files
	// outputs holds the test-file functions that end in an // Output:
	// block, so go test runs them.
	outputs map[string]bool
}

// moduleAPI parses every package of the module (build tags ignored: a name
// declared for one platform counts) and returns them by package name; a
// name may have several packages (sqlite, postgres).
func moduleAPI(t *testing.T, root string) map[string][]*api {
	t.Helper()
	byDir := map[string]*api{}
	pkgName := map[string]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		a := byDir[rel]
		if a == nil {
			a = &api{dir: rel, names: map[string]bool{}, tests: map[string]bool{}, outputs: map[string]bool{}}
			byDir[rel] = a
		}
		if strings.HasSuffix(path, "_test.go") {
			collectTests(a, f)
			return nil
		}
		pkgName[rel] = f.Name.Name
		collectNames(a, f)
		return nil
	})
	if err != nil {
		t.Fatalf("reading the module's sources: %v", err)
	}
	out := map[string][]*api{}
	for dir, a := range byDir {
		if name, ok := pkgName[dir]; ok {
			out[name] = append(out[name], a)
		}
	}
	return out
}

// collectNames records the exported declarations of a non-test file.
func collectNames(a *api, f *ast.File) {
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				a.names[d.Name.Name] = true
				continue
			}
			if recv := receiverType(d.Recv.List[0].Type); recv != "" {
				a.names[recv+"."+d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					a.names[s.Name.Name] = true
					if st, ok := s.Type.(*ast.StructType); ok {
						for _, field := range st.Fields.List {
							for _, n := range field.Names {
								a.names[s.Name.Name+"."+n.Name] = true
							}
						}
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						a.names[n.Name] = true
					}
				}
			}
		}
	}
}

// receiverType names a method's receiver type: T of T, *T, T[P], *T[P].
func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// collectTests records the functions of a test file and which of them end
// with an // Output: comment.
func collectTests(a *api, f *ast.File) {
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Recv != nil {
			continue
		}
		a.tests[fn.Name.Name] = true
		for _, cg := range f.Comments {
			if cg.Pos() > fn.Body.Lbrace && cg.End() < fn.Body.Rbrace && strings.HasPrefix(strings.TrimSpace(cg.Text()), "Output:") {
				a.outputs[fn.Name.Name] = true
			}
		}
	}
}

var (
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	// qualified is pkg.Name, pkg.Type.Method or pkg.Type.Field.
	qualified = regexp.MustCompile(`^([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*(?:\.[A-Z][A-Za-z0-9_]*)?)$`)
	// pkgPath is a package path of the module with at least one slash,
	// perhaps ending in /… or /... for the packages under it.
	pkgPath = regexp.MustCompile(`^[a-z][a-z0-9]*(?:/[a-z][a-z0-9]*)+(?:/…|/\.\.\.)?$`)
	// exampleRow is a row of the page's table of examples.
	exampleRow = regexp.MustCompile("^\\| `(Example[A-Za-z0-9_]*)` \\| ([a-z0-9/]+) \\|")
)

// TestLibraryDocNames keeps docs/library.md true of the code (issue 23):
// every identifier it names in backticks as pkg.Name (pkg.Type.Method,
// pkg.Type.Field) is declared by a package of that name, every package path
// it names exists, and every example of its table exists in the package
// named and has an // Output: block, so go test runs it.
func TestLibraryDocNames(t *testing.T) {
	doc, err := os.ReadFile(libraryDoc)
	if err != nil {
		t.Fatal(err)
	}
	pkgs := moduleAPI(t, "../..")
	dirs := map[string]*api{}
	for _, list := range pkgs {
		for _, a := range list {
			dirs[a.dir] = a
		}
	}
	checked := 0
	for _, m := range codeSpan.FindAllStringSubmatch(string(doc), -1) {
		span := strings.TrimLeft(m[1], "*&") // *llm.Error names llm.Error
		if q := qualified.FindStringSubmatch(span); q != nil {
			list, ok := pkgs[q[1]]
			if !ok {
				t.Errorf("docs/library.md names `%s`, but the module has no package %s", span, q[1])
				continue
			}
			if !slices.ContainsFunc(list, func(a *api) bool { return a.names[q[2]] }) {
				t.Errorf("docs/library.md names `%s`, but package %s declares no %s: rename it in the page", span, q[1], q[2])
			}
			checked++
			continue
		}
		if pkgPath.MatchString(span) {
			dir := strings.TrimSuffix(strings.TrimSuffix(span, "/…"), "/...")
			if _, ok := dirs[dir]; !ok {
				t.Errorf("docs/library.md names the package path `%s`, but the module has no package %s", span, dir)
			}
			checked++
		}
	}
	if checked < 50 {
		t.Errorf("only %d names checked in docs/library.md: has the page's form changed (backticked pkg.Name)?", checked)
	}

	examples := 0
	for line := range strings.SplitSeq(string(doc), "\n") {
		m := exampleRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		examples++
		a, ok := dirs[m[2]]
		switch {
		case !ok:
			t.Errorf("docs/library.md lists %s in package %s, which does not exist", m[1], m[2])
		case !a.tests[m[1]]:
			t.Errorf("docs/library.md lists %s, but package %s has no such example", m[1], m[2])
		case !a.outputs[m[1]]:
			t.Errorf("%s of package %s has no // Output: block: go test compiles it but never runs it", m[1], m[2])
		}
	}
	if examples == 0 {
		t.Error("docs/library.md lists no examples: has its table's form changed?")
	}
}

// TestLibraryDocProgram builds the minimal program of docs/library.md, as
// written there, against the module's packages (through an overlay, so no
// file is written into the tree).
func TestLibraryDocProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program; run without -short")
	}
	doc, err := os.ReadFile(libraryDoc)
	if err != nil {
		t.Fatal(err)
	}
	var src string
	for _, block := range strings.Split(string(doc), "```go\n")[1:] {
		body, _, _ := strings.Cut(block, "```")
		if strings.HasPrefix(body, "package main\n") {
			src = body
			break
		}
	}
	if src == "" {
		t.Fatal("docs/library.md holds no ```go block starting with package main: the minimal program is gone")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	main := filepath.Join(tmp, "main.go")
	if err := os.WriteFile(main, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	overlay, err := json.Marshal(map[string]map[string]string{
		"Replace": {filepath.Join(root, "internal/arch/testdata/librarymain/main.go"): main},
	})
	if err != nil {
		t.Fatal(err)
	}
	ov := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-overlay", ov, "-o", filepath.Join(tmp, "librarymain"), "./internal/arch/testdata/librarymain")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("the minimal program of docs/library.md does not build: %v\n%s", err, out)
	}
}
