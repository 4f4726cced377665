// Package persona is who rein's personal agent is (SPEC GW-1): a name and
// an avatar (identity.yaml), SOUL.md (its character and style, in the
// user's words), the user profile of MEM-1 (USER.md), and a first-run
// bootstrap that asks for them in a chat and writes them.
//
// The persona lives in a user-level workspace, <config dir>/persona/
// ([Dir]), holding SOUL.md and identity.yaml, private (0600 files in a 0700
// directory), written atomically. USER.md is not duplicated here: it is
// memory's profile (memory.UserDir, memory.TargetProfile,
// memory.ScopeUser), read and written through a memory.Store, so memory's
// scanner, cap and index apply to it.
//
// [Load] reads the persona; missing files give the zero persona, for which
// [Persona.Bootstrapped] is false. SOUL.md is capped ([SoulCap]
// characters) and scanned with memory.ScanDocument like AGENTS.md: what it
// finds is warned about, never dropped. [Persona.Section] renders what goes
// into a system prompt; the profile is left to memory's own section.
// Runs do not read the persona yet: the gateway will wire Section into its
// system prompt (a later session) — this package only leaves the seam.
//
// [Bootstrap] is the first-run conversation as a small state machine any
// chat front drives: [Bootstrap.Next] gives the question, [Bootstrap.Answer]
// takes the reply (an invalid one is asked again), [Bootstrap.Apply] writes
// the files.
package persona
