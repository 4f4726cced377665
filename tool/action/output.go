package action

import (
	"fmt"
	"strings"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/builtin"
)

// result renders the command's output and outcome for the model. The output
// reads as the bash tool's does ([builtin.RenderOutput]); above [OutputCap]
// characters the whole of it is saved as action-<call id>.log.
func (t *actionTool) result(call tool.Call, out exec.Output) tool.Result {
	text, path, saveErr := builtin.RenderOutput(call, out, OutputCap, "action-")
	var notes []string
	switch {
	case out.TimedOut:
		notes = append(notes, fmt.Sprintf("action %s timed out after %s; partial output above", t.a.Name, t.a.Timeout))
	case out.Cancelled:
		notes = append(notes, fmt.Sprintf("action %s was cancelled; partial output above", t.a.Name))
	case out.OutputLimited:
		notes = append(notes, fmt.Sprintf("action %s was stopped: its output passed the limit of %s", t.a.Name, builtin.FormatBytes(out.OutputLimit)))
	case out.ExitCode != 0:
		notes = append(notes, exitNote(out.ExitCode))
	}
	if saveErr != nil {
		notes = append(notes, fmt.Sprintf("(the whole output could not be saved: %v)", saveErr))
	}
	for _, n := range out.Notes {
		notes = append(notes, "sandbox: "+n)
	}
	if len(notes) > 0 {
		text += "\n\n" + strings.Join(notes, "\n")
	}
	r := tool.Text(text)
	r.IsError = out.TimedOut || out.Cancelled || out.OutputLimited || out.ExitCode != 0
	r.Metadata = map[string]any{
		"action":       t.a.Name,
		"exit_code":    out.ExitCode,
		"timed_out":    out.TimedOut,
		"cancelled":    out.Cancelled,
		"duration_ms":  out.Duration.Milliseconds(),
		"output_bytes": out.TotalBytes,
	}
	if path != "" {
		r.Metadata["output_path"] = path
	}
	if out.OutputLimited {
		r.Metadata["output_limited"] = true
	}
	if len(out.Notes) > 0 {
		r.Metadata["sandbox_notes"] = out.Notes
	}
	return r
}

// exitNote names a non-zero exit code, with what bash's 126 and 127 mean.
func exitNote(code int) string {
	switch code {
	case 126:
		return "exit code 126: a program could not be executed (not executable, or its interpreter line is wrong)"
	case 127:
		return "exit code 127: a program was not found; its interpreter or tool is not installed, or not in PATH"
	}
	return fmt.Sprintf("exit code %d", code)
}
