package exec

import (
	"fmt"
	"strings"
)

// Profile is what a sandboxed command may write (SPEC TOOL-7). The network
// is set apart (Sandbox.AllowNetwork, Sandbox.Egress); protected paths —
// git's config and hooks, .rein, .claude, credentials — stay protected in
// every profile.
type Profile string

// The profiles. Off is not a Sandbox profile: it means commands run on the
// host ([Local]); it is here so a setting has one vocabulary.
const (
	// ProfileWorkspace (the default) makes the workspace, the
	// session's temporary directory, the toolchain caches and
	// Sandbox.Writable writable.
	ProfileWorkspace Profile = "workspace"
	// ProfileReadOnly makes nothing writable but the session's temporary
	// directory: the workspace and the caches are read-only.
	ProfileReadOnly Profile = "read-only"
	// ProfileOff runs commands unconfined.
	ProfileOff Profile = "off"
)

// ParseProfile reads a profile name; "" is ProfileWorkspace.
func ParseProfile(s string) (Profile, error) {
	switch p := Profile(strings.TrimSpace(s)); p {
	case "":
		return ProfileWorkspace, nil
	case ProfileWorkspace, ProfileReadOnly, ProfileOff:
		return p, nil
	}
	return "", fmt.Errorf("sandbox profile %q: want workspace, read-only or off", s)
}

// The settings a denial note names, as package workspace spells them
// (workspace's tests check they exist): what the user changes to widen the
// sandbox.
const (
	// SettingProfile chooses the profile.
	SettingProfile = "sandbox"
	// SettingWritable lists more writable directories.
	SettingWritable = "sandbox.writable"
	// SettingAllowHosts is the network allow-list.
	SettingAllowHosts = "sandbox.allow_hosts"
	// SettingNetwork is off, allow-list or on.
	SettingNetwork = "sandbox.network"
	// SettingCaches is shared or isolated.
	SettingCaches = "sandbox.caches"
)

// Network modes of SettingNetwork.
const (
	// NetworkOff: no network at all, the allow-list ignored.
	NetworkOff = "off"
	// NetworkAllowList (the default): only the allow-list's hosts,
	// through the egress proxy; none when the list is empty.
	NetworkAllowList = "allow-list"
	// NetworkOn: the host's network, unfiltered.
	NetworkOn = "on"
)
