// Package fileindex keeps a list of a workspace's files for the terminal
// UI's @ picker (SPEC CLI-6): built by one walk that honours the ignore
// files (through [Options.Ignore]) and never enters .git or the usual
// dependency and cache directories, refreshed incrementally (a directory
// whose modification time has not changed is not read again), capped, and
// searched fuzzily with the path's base name weighed most.
//
// A mention may name lines: "path#20-45" or "path#L20-L45" ([ParseRange]).
package fileindex
