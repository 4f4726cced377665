package acp

import (
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinhq/rein/permission"
)

// modes are rein's permission modes (SPEC PERM-1) as offered to the
// client, in the order a mode picker shows them; their ids are rein's
// names.
var modes = []struct {
	mode permission.Mode
	name string
	desc string
}{
	{permission.ModeDefault, "Default", "Reads run; edits, commands and the network ask"},
	{permission.ModeAcceptEdits, "Accept edits", "Reads and edits in the workspace run; commands and the network ask"},
	{permission.ModePlan, "Plan", "Read and plan only; the plan is put to you before anything changes"},
	{permission.ModeReadOnly, "Read only", "Reads run; everything else is refused"},
	{permission.ModeStrict, "Strict", "Everything asks, reads included"},
	{permission.ModeBypass, "Bypass", "Everything runs without asking, deny rules excepted"},
}

// modeState is the modes offered and the policy's current one.
func modeState(p *permission.Engine) *sdk.SessionModeState {
	st := &sdk.SessionModeState{CurrentModeId: sdk.SessionModeId(p.Mode())}
	for _, m := range modes {
		st.AvailableModes = append(st.AvailableModes, sdk.SessionMode{Id: sdk.SessionModeId(m.mode), Name: m.name, Description: sdk.Ptr(m.desc)})
	}
	return st
}

// modeByID returns the mode of a client's mode id.
func modeByID(id sdk.SessionModeId) (permission.Mode, bool) {
	for _, m := range modes {
		if string(m.mode) == string(id) {
			return m.mode, true
		}
	}
	return "", false
}

// modeList names the mode ids, for an error.
func modeList() string {
	ids := make([]string, len(modes))
	for i, m := range modes {
		ids[i] = string(m.mode)
	}
	return strings.Join(ids, ", ")
}
