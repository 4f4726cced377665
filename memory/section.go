package memory

import "strings"

// Section renders the memory section of the system prompt (SPEC MEM-1):
// the profile, then the user's notes, then the workspace's, each under a
// small heading naming its file, entries as list items. Entries the
// scanner refused, those beyond a file's cap, and files whose entries
// read together as an order are left out (Snapshot warns about them). The result depends only on the snapshot, so it is
// byte-stable for the same files; it is "" when there is nothing to show.
// agent.BuildSystem puts it under its "# Memory" heading.
func Section(snap Snapshot) string {
	var b strings.Builder
	for _, f := range snap.Files {
		if len(f.Findings) > 0 {
			continue // its entries together read as an order
		}
		var shown []string
		for _, e := range f.Entries {
			if e.Shown() {
				shown = append(shown, e.Text)
			}
		}
		if len(shown) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString("## ")
		b.WriteString(sectionTitle(f))
		b.WriteString(" (")
		b.WriteString(f.Path)
		b.WriteString(")\n\n")
		for i, e := range shown {
			writeEntry(&b, e, i < len(shown)-1)
		}
	}
	return b.String()
}

// sectionTitle heads a file's part of the section.
func sectionTitle(f FileSnapshot) string {
	switch {
	case f.Target == TargetProfile:
		return "User profile"
	case f.Scope == ScopeUser:
		return "Notes for all workspaces"
	}
	return "Notes for this workspace"
}
