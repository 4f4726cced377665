package permission

import (
	"path"
	"slices"
	"strings"
)

// effect is what an option makes an otherwise harmless command do.
type effect string

const (
	effectWrites effect = "writes a file"
	effectReads  effect = "reads an arbitrary file"
	effectRuns   effect = "runs another program"
)

// optSpec is one dangerous option of a program: `--output` (long, its value
// after = or as the next word), `-o` (short, alone, in a cluster or with its
// value attached).
type optSpec struct {
	name string
	eff  effect
	// valued says the option takes a value; for effectWrites and
	// effectReads the value is the file.
	valued bool
	// at says the option reads a file only when its value holds @ or <
	// (curl -d @file, -F name=@file).
	at bool
}

// escalations is the per-program table of options that write files, read
// arbitrary paths or run programs (SPEC PERM-6). A prefix allow rule such
// as `git diff:*` never covers them unless its own words name them, and
// the file an option writes is judged like a redirection.
var escalations = map[string][]optSpec{
	"find": {
		{"-exec", effectRuns, false, false}, {"-execdir", effectRuns, false, false}, {"-ok", effectRuns, false, false}, {"-okdir", effectRuns, false, false},
		{"-delete", effectWrites, false, false}, {"-fprint", effectWrites, true, false}, {"-fprint0", effectWrites, true, false},
		{"-fprintf", effectWrites, true, false}, {"-fls", effectWrites, true, false},
	},
	"sed":  {{"-i", effectWrites, false, false}, {"--in-place", effectWrites, false, false}, {"-f", effectReads, true, false}, {"--file", effectReads, true, false}},
	"sort": {{"-o", effectWrites, true, false}, {"--output", effectWrites, true, false}, {"--compress-program", effectRuns, true, false}, {"-T", effectWrites, true, false}},
	"tar": {
		{"--to-command", effectRuns, true, false}, {"--use-compress-program", effectRuns, true, false}, {"-I", effectRuns, true, false},
		{"--checkpoint-action", effectRuns, true, false}, {"--info-script", effectRuns, true, false}, {"-F", effectRuns, true, false},
		{"--new-volume-script", effectRuns, true, false}, {"--rsh-command", effectRuns, true, false}, {"-f", effectWrites, true, false},
		{"--file", effectWrites, true, false}, {"-x", effectWrites, false, false}, {"--extract", effectWrites, false, false},
		{"-T", effectReads, true, false}, {"--files-from", effectReads, true, false},
	},
	"rsync": {{"-e", effectRuns, true, false}, {"--rsh", effectRuns, true, false}, {"--rsync-path", effectRuns, true, false}},
	"ssh":   {{"-o", effectRuns, true, false}, {"-F", effectReads, true, false}},
	"scp":   {{"-S", effectRuns, true, false}, {"-o", effectRuns, true, false}, {"-F", effectReads, true, false}},
	"curl": {
		{"-o", effectWrites, true, false}, {"--output", effectWrites, true, false}, {"-O", effectWrites, false, false}, {"--remote-name", effectWrites, false, false},
		{"-K", effectReads, true, false}, {"--config", effectReads, true, false}, {"-T", effectReads, true, false}, {"--upload-file", effectReads, true, false},
		{"-d", effectReads, true, true}, {"--data", effectReads, true, true}, {"--data-binary", effectReads, true, true},
		{"--data-urlencode", effectReads, true, true}, {"-F", effectReads, true, true}, {"--form", effectReads, true, true}, {"-c", effectWrites, true, false}, {"--cookie-jar", effectWrites, true, false}, {"-D", effectWrites, true, false},
		{"--dump-header", effectWrites, true, false}, {"--trace", effectWrites, true, false},
	},
	"wget": {
		{"-O", effectWrites, true, false}, {"--output-document", effectWrites, true, false}, {"-o", effectWrites, true, false},
		{"-i", effectReads, true, false}, {"--input-file", effectReads, true, false}, {"--post-file", effectReads, true, false},
		{"-e", effectRuns, true, false}, {"--execute", effectRuns, true, false}, {"--use-askpass", effectRuns, true, false},
	},
	"less":  {{"-o", effectWrites, true, false}, {"-O", effectWrites, true, false}, {"--log-file", effectWrites, true, false}},
	"man":   {{"-P", effectRuns, true, false}, {"--pager", effectRuns, true, false}, {"-H", effectRuns, false, false}},
	"diff":  {{"--to-file", effectReads, true, false}, {"--from-file", effectReads, true, false}},
	"xxd":   {{"-r", effectWrites, false, false}},
	"tee":   {},
	"zip":   {{"-T", effectRuns, false, false}, {"-TT", effectRuns, true, false}, {"--unzip-command", effectRuns, true, false}},
	"unzip": {{"-d", effectWrites, true, false}},
	"jq":    {{"--rawfile", effectReads, true, false}, {"--slurpfile", effectReads, true, false}, {"-f", effectReads, true, false}, {"--from-file", effectReads, true, false}},
	"rg":    {{"--pre", effectRuns, true, false}, {"--search-zip", effectRuns, false, false}, {"-z", effectRuns, false, false}, {"--ignore-file", effectReads, true, false}},
	"grep":  {{"-f", effectReads, true, false}, {"--file", effectReads, true, false}, {"--exclude-from", effectReads, true, false}},
}

// escalation is an option found in a command.
type escalation struct {
	opt   string // as written
	eff   effect
	value string // the option's value, when it takes one and it is known
	word  int    // index of the word holding the option
}

// escalationsIn returns the dangerous options of a command's words (program
// first, given by base name), and what sed and awk scripts do.
func escalationsIn(ws []word) []escalation {
	if len(ws) == 0 || !ws[0].Static {
		return nil
	}
	prog := path.Base(ws[0].Value)
	var out []escalation
	switch prog {
	case "sed":
		out = append(out, sedEscalations(ws)...)
	case "awk", "gawk", "mawk", "nawk":
		out = append(out, awkEscalations(ws)...)
	}
	specs := escalations[prog]
	if prog == "git" {
		var sub string
		out, sub = gitGlobalEscalations(ws)
		if gitRunsTools[sub] {
			out = append(out, escalation{opt: "git " + sub, eff: effectRuns})
		}
		specs = append(slices.Clone(gitOptions[""]), gitOptions[sub]...)
	}
	for i := 1; i < len(ws); i++ {
		v := ws[i].Value
		if v == "--" {
			break
		}
		for _, sp := range specs {
			if e, skip, ok := matchOpt(sp, ws, i); ok {
				if !sp.at || strings.ContainsAny(e.value, "@<") {
					out = append(out, e)
				}
				i += skip
				break
			}
		}
	}
	return out
}

// matchOpt matches one spec at word i; skip says how many following words
// the option consumed as its value.
func matchOpt(sp optSpec, ws []word, i int) (escalation, int, bool) {
	v := ws[i].Value
	e := escalation{opt: sp.name, eff: sp.eff, word: i}
	next := func() (string, int) {
		if sp.valued && i+1 < len(ws) {
			return ws[i+1].Value, 1
		}
		return "", 0
	}
	switch {
	case v == sp.name:
		val, skip := next()
		e.value = val
		return e, skip, true
	case strings.HasPrefix(sp.name, "--") && strings.HasPrefix(v, sp.name+"="):
		e.value = v[len(sp.name)+1:]
		return e, 0, true
	case len(sp.name) == 2 && sp.name[0] == '-' && sp.name[1] != '-' && len(v) > 2 && v[0] == '-' && v[1] != '-':
		// A short option in a cluster (-sSo FILE) or with its value
		// attached (-oFILE).
		j := strings.IndexByte(v[1:], sp.name[1])
		if j < 0 {
			return e, 0, false
		}
		if !sp.valued {
			return e, 0, true
		}
		if rest := v[1+j+1:]; rest != "" {
			e.value = rest
			return e, 0, true
		}
		val, skip := next()
		e.value = val
		return e, skip, true
	}
	return e, 0, false
}

// gitOptions are git's dangerous options by subcommand; "" holds those of
// every subcommand.
var gitOptions = map[string][]optSpec{
	"": {
		{"--output", effectWrites, true, false}, {"--ext-diff", effectRuns, false, false}, {"--textconv", effectRuns, false, false},
		{"--upload-pack", effectRuns, true, false}, {"--receive-pack", effectRuns, true, false}, {"--exec", effectRuns, true, false},
		{"--no-index", effectReads, false, false}, {"--contents", effectReads, true, false}, {"--open-files-in-pager", effectRuns, false, false},
		{"--extcmd", effectRuns, true, false}, {"--output-directory", effectWrites, true, false},
	},
	"grep":         {{"-O", effectRuns, false, false}},
	"clone":        {{"-u", effectRuns, true, false}},
	"fetch":        {{"-u", effectRuns, true, false}},
	"pull":         {{"-u", effectRuns, true, false}},
	"ls-remote":    {{"-u", effectRuns, true, false}},
	"archive":      {{"-o", effectWrites, true, false}, {"--remote", effectRuns, true, false}},
	"format-patch": {{"-o", effectWrites, true, false}},
	"rebase":       {{"-x", effectRuns, true, false}},
	"blame":        {{"-S", effectReads, true, false}},
}

// gitRunsTools are git subcommands that run programs the configuration
// names whatever their options.
var gitRunsTools = map[string]bool{"difftool": true, "mergetool": true, "submodule": true, "filter-branch": true, "bisect": true}

// gitGlobalEscalations finds git's options before the subcommand that run
// programs or change where configuration comes from (-c core.pager=…,
// --config-env, --exec-path=DIR), and returns the subcommand.
func gitGlobalEscalations(ws []word) ([]escalation, string) {
	var out []escalation
	for i := 1; i < len(ws); i++ {
		v := ws[i].Value
		switch {
		case v == "-c" || v == "--config-env":
			out = append(out, escalation{opt: v, eff: effectRuns, word: i})
			i++
		case strings.HasPrefix(v, "-c") && len(v) > 2, strings.HasPrefix(v, "--config-env="), strings.HasPrefix(v, "--exec-path="):
			out = append(out, escalation{opt: v, eff: effectRuns, word: i})
		case v == "-C" || v == "--git-dir" || v == "--work-tree" || v == "--namespace":
			i++
		case strings.HasPrefix(v, "-"):
		default:
			return out, v
		}
	}
	return out, ""
}

// sedEscalations reads sed's scripts (the first operand, or each -e and
// --expression) for the commands that write (w, W, s///w), read (r, R) or
// run (e, s///e) files and programs. A script it cannot read counts as
// running a program.
func sedEscalations(ws []word) []escalation {
	var scripts []word
	explicit := false
	var operands []word
	for i := 1; i < len(ws); i++ {
		v := ws[i].Value
		switch {
		case v == "-e" || v == "--expression":
			explicit = true
			if i+1 < len(ws) {
				scripts = append(scripts, ws[i+1])
				i++
			}
		case strings.HasPrefix(v, "--expression="):
			explicit = true
			scripts = append(scripts, word{Text: v, Value: strings.TrimPrefix(v, "--expression="), Static: ws[i].Static})
		case v == "-f" || v == "--file" || strings.HasPrefix(v, "--file="):
			explicit = true
			if v == "-f" || v == "--file" {
				i++
			}
		case v == "--":
			operands = append(operands, ws[i+1:]...)
			i = len(ws)
		case strings.HasPrefix(v, "-") && len(v) > 1:
			if strings.Contains(v[1:], "e") && !strings.HasPrefix(v, "--") {
				explicit = true // -ne SCRIPT
				if i+1 < len(ws) {
					scripts = append(scripts, ws[i+1])
					i++
				}
			}
		default:
			operands = append(operands, ws[i])
		}
	}
	if !explicit && len(operands) > 0 {
		scripts = append(scripts, operands[0])
	}
	var out []escalation
	for _, s := range scripts {
		if !s.Static {
			out = append(out, escalation{opt: "a script known only when it runs", eff: effectRuns})
			continue
		}
		out = append(out, sedScript(s.Value)...)
	}
	return out
}

// awkEscalations marks an awk program that runs commands (system, pipes),
// writes files (print > f) or reads them (getline < f). Comparisons with >
// are taken as writes too: the check errs on the side of asking.
func awkEscalations(ws []word) []escalation {
	for i := 1; i < len(ws); i++ {
		v := ws[i].Value
		switch {
		case v == "-f" || strings.HasPrefix(v, "--file"):
			return []escalation{{opt: v, eff: effectReads}}
		case v == "-v" || v == "-F":
			i++
		case strings.HasPrefix(v, "-"):
		default:
			if !ws[i].Static {
				return []escalation{{opt: "a program known only when it runs", eff: effectRuns}}
			}
			if strings.Contains(v, "system") || strings.Contains(v, "|") || strings.Contains(v, "getline") {
				return []escalation{{opt: "system/pipe in the awk program", eff: effectRuns}}
			}
			if strings.Contains(v, ">") {
				return []escalation{{opt: "> in the awk program", eff: effectWrites}}
			}
			return nil
		}
	}
	return nil
}
