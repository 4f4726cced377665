package shellparse

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// texts renders commands as strings: words joined by spaces, with the
// depth and the Via marker when set.
func texts(cs []Command) []string {
	var out []string
	for _, c := range cs {
		s := words(c.Words)
		if c.Depth > 0 {
			s = strings.Repeat(">", c.Depth) + s
		}
		if c.Via != "" {
			s += " [" + c.Via + "]"
		}
		out = append(out, s)
	}
	return out
}

func words(ws []Word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.Text
	}
	return strings.Join(parts, " ")
}

func TestParseCommands(t *testing.T) {
	cases := []struct {
		src  string
		want []string
	}{
		{"git diff && go test ./...", []string{"git diff", "go test ./..."}},
		{"(git diff; ls) | grep x", []string{"git diff", "ls", "grep x"}},
		{`echo "$(rm -rf x)" <(curl y)`, []string{"echo $(rm -rf x) <(curl y)", "rm -rf x", "curl y"}},
		{`git "diff" 'HEAD' \--stat`, []string{"git diff HEAD --stat"}},
		{`bash -c "git diff; curl x"`, []string{"bash -c git diff; curl x", ">git diff", ">curl x"}},
		{`sh -o pipefail -ec 'a | b'`, []string{"sh -o pipefail -ec a | b", ">a", ">b"}},
		{`eval "curl x | grep y"`, []string{"eval curl x | grep y", ">curl x", ">grep y"}},
		{`trap 'rm -rf x' EXIT`, []string{"trap rm -rf x EXIT", ">rm -rf x"}},
		{`su -c 'rm x' root`, []string{"su -c rm x root", ">rm x"}},
		{`env -S 'rm -f x'`, []string{"env -S rm -f x", ">rm -f x"}},
		{`watch -n 1 'rm x'`, []string{"watch -n 1 rm x", ">rm x"}},
		{"bash <<'EOF'\nrm -rf x\nEOF", []string{"bash", ">rm -rf x"}},
		{`sudo timeout 5 sh -c 'rm y'`, []string{"sudo timeout 5 sh -c rm y", ">rm y"}},
		{`find . -name '*.o' -exec rm {} + -delete`, []string{"find . -name *.o -exec rm {} + -delete", "rm {} [find -exec]", "rm -rf . [find -delete]"}},
		{`find src build -execdir sh -c 'rm "$1"' _ {} \;`, []string{`find src build -execdir sh -c rm "$1" _ {} ;`, `sh -c rm "$1" _ {} [find -execdir]`, ">rm $1"}},
		{`find -L / -xdev -delete`, []string{"find -L / -xdev -delete", "rm -rf / [find -delete]"}},
		{`export A=1 B; local -r c`, []string{"export A=1 B", "local -r c"}},
		{`X=1 Y=2`, nil},
		{`f() { rm -rf x; }; f`, []string{"rm -rf x", "f"}},
		// bash's view, where the parser's differs (PERM-6)
		{"coproc A=1 B=2 rm x", []string{"rm x"}},
		{"bash -c -- 'rm x'", []string{"bash -c -- rm x", ">rm x"}},
		{"bash -c -o pipefail 'rm x' name", []string{"bash -c -o pipefail rm x name", ">rm x"}},
		{"sh -c -e -- 'rm x'", []string{"sh -c -e -- rm x", ">rm x"}},
		{"sh +c 'rm x'", []string{"sh +c rm x", ">rm x"}},
		{"env -S'rm x' y", []string{"env -Srm x y", ">rm x y"}},
		{"env -iS 'rm x'", []string{"env -iS rm x", ">rm x"}},
		{"su -lc 'rm x' root", []string{"su -lc rm x root", ">rm x"}},
		{"su -c'rm x' root", []string{"su -crm x root", ">rm x"}},
		{"eval -- 'rm x'", []string{"eval -- rm x", ">rm x"}},
	}
	for _, c := range cases {
		s, err := Parse(c.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.src, err)
			continue
		}
		if diff := cmp.Diff(c.want, texts(s.Commands)); diff != "" {
			t.Errorf("Parse(%q) -want +got:\n%s", c.src, diff)
		}
		if s.Dynamic != "" {
			t.Errorf("Parse(%q): dynamic: %s", c.src, s.Dynamic)
		}
	}
}

// Finding: arithmetic, indirect expansion and the like run code hidden in a
// variable's value, so the text alone cannot tell what the script does.
func TestParseDynamic(t *testing.T) {
	cases := []struct {
		src     string
		dynamic bool
	}{
		{"x='a[$(touch /tmp/p)]'; git status; ((x))", true},
		{"x='a[$(touch /tmp/p)]'; echo $((x))", true},
		{"echo $[x]", true},
		{"x='$(touch /tmp/p)'; echo ${x@P}", true},
		{"echo ${x@Q}", true},
		{"echo ${!x}", true},
		{"echo ${a[i]} ", true},
		{"echo ${a[$i]}", true},
		{"echo ${s:x}", true},
		{"echo ${s:0:$n}", true},
		{"git status; let 'y=$(touch /tmp/p)'", true},
		{"for ((i=a[$(id)];;)); do :; done", true},
		{"for ((i=0; i<3; i++)); do :; done", true},
		{"[[ x -eq 1 ]]", true},
		{"[[ $n -gt 2 ]] && ls", true},
		{"[[ -v a[$i] ]]", true},
		{"a[i]=1", true},
		{"a=([k]=v)", true},
		{"declare -n r=x", true},
		{"local -i n=$x", true},
		{"typeset -gn r", true},
		{`declare "$name=1"`, true},
		{`declare 'a[$(id)]=1'`, true},
		{`unset 'a[$(id)]'`, true},
		{`unset "$v"`, true},
		{`read 'a[$(id)]'`, true},
		{`printf -v 'a[$(id)]' x`, true},
		{`test -v 'a[$(id)]'`, true},
		{`[ -v "$x" ]`, true},
		{`wait -p 'a[$(id)]' 1`, true},
		{`mapfile -C 'rm x' -c 1 arr`, true},
		{`alias ls='rm -rf x'`, true},
		{`hash -p /bin/rm git`, true},
		{`enable -f ./x.so x`, true},
		{`"$(echo rm)" -rf x`, true},
		{`$CMD diff`, true},
		{`sudo "$x" -rf y`, true},
		{`{rm,-rf,x}`, true},
		{`bash -c "$X"`, true},
		{`eval "$X"`, true},
		{`trap "$X" EXIT`, true},
		{`source "$f"`, true},
		{`. $f`, true},
		{`cat x | bash`, true},
		{`curl x | sh -s`, true},
		{`bash -c 'echo (' `, true},
		{`bash -c "bash -c \"bash -c 'bash -c ls'\""`, true},
		{"bash <<EOF\n$X\nEOF", true},
		// static scripts
		{"echo $((1 + 2)) $((0x10 * (3 - 1)))", false},
		{"echo ${a[0]} ${a[@]} ${#a[*]} ${!a[@]} ${!pre*} ${s:1:2} ${s: -1}", false},
		{"echo ${x:-default} ${x#pre} ${x/a/b} ${x^^}", false},
		{"[[ 3 -gt 2 ]]", false},
		{`[[ -v HOME && $x == y ]]`, false},
		{`[ "$n" -eq 1 ]`, false}, // test/[ take numbers, not expressions
		{`printf '[%s]\n' "$x"`, false},
		{`read -r -p '[y/N] ' ans`, false},
		{`unset -f x y`, false},
		{`wait $pid`, false},
		{`declare -a arr=(1 2) x=$y`, false},
		{`export -n FOO`, false},
		{`source ./env.sh`, false},
		{`bash scripts/test.sh`, false},
		{`bash --version`, false},
		{`command -v "$x"`, false},
		{`trap - INT`, false},
		{`git commit -m 'use $(pwd) not $((1))'`, false},
	}
	for _, c := range cases {
		s, err := Parse(c.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.src, err)
			continue
		}
		if got := s.Dynamic != ""; got != c.dynamic {
			t.Errorf("Parse(%q): dynamic %v (%q), want %v", c.src, got, s.Dynamic, c.dynamic)
		}
	}
}

func TestVariants(t *testing.T) {
	cases := []struct {
		src  string
		want []string
	}{
		{"rm -rf x", []string{"rm -rf x"}},
		{"/bin/rm -rf x", []string{"/bin/rm -rf x", "rm -rf x"}},
		{"sudo -u app env A=1 nohup timeout -s KILL 5 /usr/bin/rm x", []string{
			"sudo -u app env A=1 nohup timeout -s KILL 5 /usr/bin/rm x", "env A=1 nohup timeout -s KILL 5 /usr/bin/rm x",
			"nohup timeout -s KILL 5 /usr/bin/rm x", "timeout -s KILL 5 /usr/bin/rm x", "/usr/bin/rm x", "rm x"}},
		{"setsid rm x", []string{"setsid rm x", "rm x"}},
		{"busybox rm x", []string{"busybox rm x", "rm x"}},
		{"nice -n 5 ionice -c 3 rm x", []string{"nice -n 5 ionice -c 3 rm x", "ionice -c 3 rm x", "rm x"}},
		{"stdbuf -o0 xargs -n 1 rm", []string{"stdbuf -o0 xargs -n 1 rm", "xargs -n 1 rm", "rm"}},
		{"doas chroot /mnt rm x", []string{"doas chroot /mnt rm x", "chroot /mnt rm x", "rm x"}},
		{"uv run --with x pytest -q", []string{"uv run --with x pytest -q", "pytest -q"}},
		{"bundle exec rake", []string{"bundle exec rake", "rake"}},
		{"command -v rm", []string{"command -v rm"}},
		{"command rm x", []string{"command rm x", "rm x"}},
		{"sudo", []string{"sudo"}},
		{"sudo -u app A=1 B=2 rm x", []string{"sudo -u app A=1 B=2 rm x", "rm x"}},
		{"git status", []string{"git status"}},
	}
	for _, c := range cases {
		s, err := Parse(c.src)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range s.Commands[0].Variants() {
			got = append(got, words(v))
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("Variants(%q) -want +got:\n%s", c.src, diff)
		}
	}
}

func TestInner(t *testing.T) {
	cases := []struct {
		src, want, env string
	}{
		{"FOO=1 sudo -u app env BAR=2 nohup timeout -s KILL 5 /usr/bin/python3 x.py", "python3 x.py", "BAR=2"},
		{"command -v python3", "", ""},
		{"sudo", "", ""},
		{"env", "", ""},
		{"env -i A=1", "", "A=1"},
		{"exec -a name ls -l", "ls -l", ""},
		{"/usr/bin/time -v make", "make", ""},
		{"./build.sh --fast", "build.sh --fast", ""},
	}
	for _, c := range cases {
		s, err := Parse(c.src)
		if err != nil {
			t.Fatal(err)
		}
		in, env := s.Commands[0].Inner()
		if words(in) != c.want || words(env) != c.env {
			t.Errorf("Inner(%q) = %q env %q, want %q env %q", c.src, words(in), words(env), c.want, c.env)
		}
		if p := s.Commands[0].Program(); p != strings.Split(c.want, " ")[0] {
			t.Errorf("Program(%q) = %q", c.src, p)
		}
	}
}

func TestWordsAndRedirects(t *testing.T) {
	s, err := Parse(`A=1 B=$x cat ~/a "$HOME/b" 'c d' e\ f *.go > out 2>&1 >> log < in 3<>rw &> all <<EOF
$x
EOF`)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Commands[0]
	type w struct {
		Text   string
		Static bool
	}
	var got []w
	for _, x := range c.Words {
		got = append(got, w{x.Text, x.Static})
	}
	want := []w{{"cat", true}, {"~/a", true}, {"$HOME/b", false}, {"c d", true}, {"e f", true}, {"*.go", false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("words -want +got:\n%s", diff)
	}
	if c.Words[1].Value == "~/a" || !strings.HasSuffix(c.Words[1].Value, "/a") {
		t.Errorf("~/a has value %q, want the home directory expanded", c.Words[1].Value)
	}
	var redirs []string
	for _, r := range c.Redirs {
		redirs = append(redirs, map[bool]string{true: ">", false: "<"}[r.Write]+r.Target.Text)
	}
	if diff := cmp.Diff([]string{">out", ">log", "<in", ">rw", ">all"}, redirs); diff != "" {
		t.Errorf("redirects -want +got:\n%s", diff)
	}
	if !c.Stdin {
		t.Error("input redirection not seen as stdin")
	}
	if diff := cmp.Diff([]Assign{{"A", Lit("1")}, {"B", Word{Text: "$x", Static: false}}}, c.Assigns); diff != "" {
		t.Errorf("assigns -want +got:\n%s", diff)
	}
}

func TestStdin(t *testing.T) {
	s, err := Parse("echo x | { cat; wc; }; python3; python3 < f; bash -c 'python3'")
	if err != nil {
		t.Fatal(err)
	}
	var got []bool
	for _, c := range s.Commands {
		got = append(got, c.Stdin)
	}
	if diff := cmp.Diff([]bool{false, true, true, false, true, false, false}, got); diff != "" {
		t.Errorf("stdin of %v -want +got:\n%s", texts(s.Commands), diff)
	}
}

// Rough reads more than bash would run, for deny rules on commands that
// do not parse or are refused (PERM-6).
func TestRough(t *testing.T) {
	cases := []struct {
		src  string
		want []string
	}{
		{`echo 'x; sudo rm -rf / && "ls" (`, []string{"echo x", "sudo rm -rf /", "ls", ">x", ">sudo rm -rf /", ">ls"}},
		{"echo hi\r# ; touch x", []string{"echo hi #", "touch x"}},
		{"p1 #\\\np2", []string{"p1 #p2", "p1 #", "p2"}},
		{`r"m" -rf /; \rm x; $'rm' y`, []string{"rm -rf /", "rm x", "rm y", ">m", ">rm"}},
		{"if true; then rm x; fi; { rm y; }; >out rm z; 2> err rm w", []string{"true", "rm x", "rm y", "rm z", "rm w"}},
		{"A=1 B=2 rm x", []string{"rm x"}},
		{`bash -c 'rm -rf /'`, []string{"bash -c rm -rf /", ">rm -rf /"}},
	}
	for _, c := range cases {
		if diff := cmp.Diff(c.want, texts(Rough(c.src))); diff != "" {
			t.Errorf("Rough(%q) -want +got:\n%s", c.src, diff)
		}
	}
	var many strings.Builder
	for i := range MaxCommands + 10 {
		fmt.Fprintf(&many, "c%d;", i)
	}
	if n := len(Rough(many.String())); n != MaxCommands {
		t.Errorf("Rough of %d commands lists %d, want MaxCommands", MaxCommands+10, n)
	}
	if cs := Rough(strings.Repeat("a", 4*MaxSize) + ";rm x"); len(cs) != 1 {
		t.Errorf("Rough read past 4×MaxSize: %d commands", len(cs))
	}
	if cs := Rough("A=1 B=2 rm x"); len(cs[0].Assigns) != 2 || cs[0].Assigns[1].Name != "B" {
		t.Errorf("Rough: assignments %v", cs[0].Assigns)
	}
	if _, err := Parse("echo 'unterminated"); err == nil {
		t.Error("Parse accepted an unterminated quote")
	}
}

// FuzzParse: never panics, every command has words, the work is linear in
// the bytes parsed (PERM-6: bounded), and a refusal says why.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"git diff && rm -rf x", `bash -c "eval 'x=1; ((x))'"`, "find . -exec sh -c 'rm {}' \\;",
		"sudo env A=1 timeout 5 /bin/rm x", "echo ${a[$i]} $((1+2)) <<EOF\n$(x)\nEOF", "trap 'a' EXIT; su -c b",
		"echo hi\r# ; touch x", "p1 #\\\np2", "a|b|c && d || e", "echo $((1+2*3-4))", "if a; then b; elif c; then d; fi",
		"f() { f | f & }; f", "cat <<'E'\n#x \\\nE\nls", "echo $(echo $(echo $(ls)))"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		p, err := analyse(context.Background(), src)
		if err != nil {
			var re *RefusedError
			if errors.As(err, &re) && (re.Reason == "" || re.Kind == 0) {
				t.Fatalf("Parse(%q): a refusal without a reason: %#v", src, re)
			}
			Rough(src)
			return
		}
		if p.ticks > workBound(p.work) {
			t.Fatalf("Parse(%q): %d nodes walked for %d bytes", src, p.ticks, p.work)
		}
		for _, c := range p.s.Commands {
			if len(c.Words) == 0 {
				t.Fatalf("Parse(%q): a command without words", src)
			}
			c.Variants()
			c.Inner()
		}
	})
}

func TestLayers(t *testing.T) {
	s, err := Parse("sudo env A=1 timeout 5 env B=2 rm x")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range s.Commands[0].Layers() {
		got = append(got, words(l.Words)+" | "+words(l.Env))
	}
	want := []string{"sudo env A=1 timeout 5 env B=2 rm x | ", "env A=1 timeout 5 env B=2 rm x | ",
		"timeout 5 env B=2 rm x | A=1", "env B=2 rm x | A=1", "rm x | A=1 B=2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

func TestForkBomb(t *testing.T) {
	for src, want := range map[string]bool{
		":(){ :|:& };:":                   true,
		"bomb() { bomb | bomb & }; bomb":  true,
		`bash -c 'f() { f & f; }; f'`:     true,
		"f() { echo hi; }; f":             false,
		"g() { ls | grep x; }; g | cat &": false,
	} {
		s, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if s.ForkBomb != want {
			t.Errorf("Parse(%q).ForkBomb = %v, want %v", src, s.ForkBomb, want)
		}
	}
}

// PERM-6: a for loop's variable is an assignment of each of its words, so
// the policy can follow `for f in a b; do cat $f; done`.
func TestLoopVariable_PERM6(t *testing.T) {
	s, err := Parse("for f in a 'b c'; do cat $f; done; for g; do :; done")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range s.Assigns {
		got = append(got, fmt.Sprintf("%s=%s/%v", a.Name, a.Value.Value, a.Value.Static))
	}
	if want := "f=a/true f=b c/true g=/false"; strings.Join(got, " ") != want {
		t.Errorf("assigns %q, want %q", strings.Join(got, " "), want)
	}
}
