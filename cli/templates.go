package cli

// settingsTemplate is the .rein/settings.yaml rein init writes for a
// project.
const settingsTemplate = `# rein workspace settings. Layers, highest first: flags, REIN_* variables,
# this file, ~/.config/rein/settings.yaml, defaults (see: rein config show).

# model: anthropic/claude-sonnet-4-5   # provider/model, a bare name, or a profile
# max_turns: 100                       # model calls per prompt
# timeout: 30m                         # wall-clock budget of a run
# sandbox:                             # a workspace may only tighten it; see rein doctor
#   profile: workspace                 # workspace | read-only | on | off
#   allow_hosts: [registries]          # hosts commands may reach (applies once you trust the workspace)

permissions:
  mode: default        # strict | default | accept-edits | read-only | bypass
  allow:
    # - "bash(go test:*)"
    # - "bash(git diff:*)"
  deny:
    # - "read_file(secrets/**)"
`

// agentsTemplate is the AGENTS.md rein init writes for a project.
const agentsTemplate = `# AGENTS.md

Instructions for coding agents working in this repository. rein puts this
file, verbatim, into every session's system prompt.

## Project
<!-- What this project is, in two or three sentences. -->

## Build and test
<!-- The exact commands, e.g.:
- build: go build ./...
- test:  go test ./...
-->

## Conventions
<!-- Style, layout, naming; what reviewers look for. -->

## Do not
<!-- Files or areas agents must not touch; commands they must not run. -->
`

// reviewerTemplate is the example agent rein init writes for a project.
const reviewerTemplate = `---
# An example agent (docs/workspace.md). The model hands work to it with the
# task tool; rein --agent reviewer runs a whole session as it. Edit it, or
# delete the file: rein lists the agents with rein agents list.
name: reviewer
description: Reviews a change for bugs, missing tests and style. Use after editing code, before committing.
# The tools it may use; leave the key out for every tool, [] for none. A
# rule, bash(git diff:*), gives the tool for the calls it matches only, and
# runs them without asking; with no tool that edits files, it changes nothing.
tools: read_file, list_dir, glob, grep, bash(git diff:*), bash(git log:*), bash(git status:*)
# model: anthropic/claude-sonnet-4-5   # leave out (or inherit) for the session's model
# permission_mode: read-only would deny its git commands: read-only mode denies bash.
max_turns: 30
---
You review the changes in this repository. Start from git diff (and git status
for new files), then read the code around each change.

Report, most serious first:
- bugs: wrong logic, unhandled errors, races, resource leaks;
- missing or weak tests for what changed;
- departures from the conventions AGENTS.md describes.

Give each finding its file and line, and a concrete fix. Say plainly when the
change looks right. Change nothing yourself.
`

// chatSettingsTemplate is the .rein/settings.yaml of a chat workspace.
const chatSettingsTemplate = `# rein settings of a chat workspace: a persona (AGENTS.md) and a model; no
# tools, no commands, no file access (SPEC WS-2). Layers, highest first:
# flags, REIN_* variables, this file, ~/.config/rein/settings.yaml, defaults
# (see: rein config show).

kind: chat                             # project | chat

# model: anthropic/claude-sonnet-4-5   # provider/model, a bare name, or a profile
# max_turns: 10
`

// chatAgentsTemplate is the AGENTS.md of a chat workspace: the persona.
const chatAgentsTemplate = `# AGENTS.md

Who the assistant of this workspace is. rein puts this file, verbatim, into
every session's system prompt.

## Persona
You are a friendly, precise assistant. <!-- For whom? A team, a product's
users, yourself. What is it for: answering questions, drafting, tutoring? -->

## Tone
- Answer in the language the user writes in.
- Be brief: lead with the answer, then the detail that matters.
<!-- Formal or casual? Markdown or plain text? -->

## What it knows
<!-- Facts it should rely on: the product, the team, links, glossary. -->

## Do not
- Invent facts, figures or quotes; say when you are unsure.
<!-- Topics to decline, things never to promise. -->
`
