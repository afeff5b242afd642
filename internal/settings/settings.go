// Package settings names, with stable ids, the settings that allow what a
// sandbox was refused: for each, the moat flag that sets it and the
// library's Config field. A refusal carries the id; the words that tell a
// person which flag to use, and the JSON report's flag and field, are
// derived from this one table, so they never disagree.
//
// Adding a setting is one line in table. An id, once published, is never
// renamed or reused: harnesses match on it.
package settings

import "strings"

// Setting is one way to allow something moat refused. The zero value is
// no setting: nothing allows the refusal.
type Setting struct {
	// ID is the stable, dotted name, e.g. "network.allow-domain".
	ID string
	// Flag is the flag of moat run (and exec, python, shell) that sets
	// it, e.g. "--allow-domain".
	Flag string
	// Placeholder names the flag's value in usage, e.g. "HOST", "SIZE";
	// empty for a flag that takes none.
	Placeholder string
	// Field is the library's Config field, e.g. "Config.Network" or
	// "Limits.MemoryBytes".
	Field string
	// Needs are the arguments that must come with Flag for it to take
	// effect, e.g. {"--network", "allow-list"}; nil for none.
	Needs []string
	// Joined is true for a flag whose value must follow an "=" in the
	// same argument, as a switch's "--protect-credentials=false" does;
	// false for a value in the next argument.
	Joined bool
}

// table lists every setting. One line each; the order is the one the
// documentation shows.
var table = []Setting{
	{ID: "build", Flag: "--build", Field: "Config.Build"},
	{ID: "network.allow-domain", Flag: "--allow-domain", Placeholder: "HOST", Field: "Config.Network", Needs: []string{"--network", "allow-list"}},
	{ID: "network.allow-local", Flag: "--allow-local", Placeholder: "ADDRESS", Field: "Config.AllowLocal"},
	{ID: "sockets", Flag: "--allow-socket", Placeholder: "PATH", Field: "Config.Sockets"},
	{ID: "grants.read", Flag: "--readable", Placeholder: "PATH", Field: "Config.Grants"},
	{ID: "grants.write", Flag: "--writable", Placeholder: "PATH", Field: "Config.Grants"},
	{ID: "grants.exec", Flag: "--executable", Placeholder: "PATH", Field: "Config.Grants"},
	{ID: "grants.mode", Flag: "--grant", Placeholder: "PATH=MODE", Field: "Config.Grants"},
	{ID: "env", Flag: "--env", Placeholder: "NAME", Field: "Config.Env"},
	{ID: "home", Flag: "--home", Placeholder: "DIR", Field: "Config.Home"},
	{ID: "isolation", Flag: "--isolation", Placeholder: "LEVEL", Field: "Config.Isolation"},
	{ID: "workdir", Flag: "--workdir", Placeholder: "DIR", Field: "Config.WorkDir"},
	{ID: "workdir.allow-home", Flag: "--allow-home-workdir", Field: "Config.AllowHomeWorkDir"},
	{ID: "protect.user-home", Flag: "--protect-user-home", Placeholder: "BOOL", Field: "SecurityConfig.ProtectUserHome", Joined: true},
	{ID: "protect.credentials", Flag: "--protect-credentials", Placeholder: "BOOL", Field: "SecurityConfig.ProtectCredentials", Joined: true},
	{ID: "protect.shell-history", Flag: "--protect-shell-history", Placeholder: "BOOL", Field: "SecurityConfig.ProtectShellHistory", Joined: true},
	{ID: "protect.package-credentials", Flag: "--protect-package-credentials", Placeholder: "BOOL", Field: "SecurityConfig.ProtectPackageCredentials", Joined: true},
	{ID: "protect.cloud-config", Flag: "--protect-cloud-config", Placeholder: "BOOL", Field: "SecurityConfig.ProtectCloudConfig", Joined: true},
	{ID: "protect.browser-data", Flag: "--protect-browser-data", Placeholder: "BOOL", Field: "SecurityConfig.ProtectBrowserData", Joined: true},
	{ID: "protect.keychains", Flag: "--protect-keychains", Placeholder: "BOOL", Field: "SecurityConfig.ProtectKeychains", Joined: true},
	{ID: "limits.memory", Flag: "--memory", Placeholder: "SIZE", Field: "Limits.MemoryBytes"},
	{ID: "limits.disk", Flag: "--disk", Placeholder: "SIZE", Field: "Limits.DiskBytes"},
	{ID: "limits.disk-inodes", Flag: "--disk-inodes", Placeholder: "N", Field: "Limits.DiskInodes"},
	{ID: "limits.cpu-time", Flag: "--cpu-time", Placeholder: "SECONDS", Field: "Limits.CPUSeconds"},
	{ID: "limits.file-size", Flag: "--file-size", Placeholder: "SIZE", Field: "Limits.FileSizeBytes"},
	{ID: "limits.processes", Flag: "--processes", Placeholder: "N", Field: "Limits.Processes"},
	{ID: "limits.open-files", Flag: "--open-files", Placeholder: "N", Field: "Limits.OpenFiles"},
	{ID: "limits.timeout", Flag: "--timeout", Placeholder: "DURATION", Field: "Limits.Timeout"},
}

// Unlimited is the value of a limit's flag that lifts the limit; the
// Config field takes -1 for it.
const Unlimited = "unlimited"

// Lookup returns the setting called id, and whether there is one.
func Lookup(id string) (Setting, bool) {
	for _, s := range table {
		if s.ID == id {
			return s, true
		}
	}
	return Setting{}, false
}

// All returns a copy of every setting, in the table's order.
func All() []Setting {
	out := make([]Setting, len(table))
	for i, s := range table {
		out[i] = s
		out[i].Needs = append([]string(nil), s.Needs...)
	}
	return out
}

// Words returns how the moat command names the setting called id in a
// message that names it by its Config field: the flag, then the field in
// brackets, e.g. "--home (Config.Home)". An unknown id gives "".
func Words(id string) string {
	s, ok := Lookup(id)
	if !ok {
		return ""
	}
	return s.Flag + " (" + s.Field + ")"
}

// Field returns the Config field of the setting called id, or "" for an
// unknown id.
func Field(id string) string {
	s, _ := Lookup(id)
	return s.Field
}

// Args returns the command-line arguments that give the setting value:
// Needs, Flag, then value when the flag takes one. An empty value stands
// for the Placeholder; Args then returns nil for a flag that takes one,
// since no concrete arguments follow from the refusal.
func (s Setting) Args(value string) []string {
	if s.ID == "" || (s.Placeholder != "" && value == "") {
		return nil
	}
	out := append([]string(nil), s.Needs...)
	switch {
	case s.Placeholder == "":
		out = append(out, s.Flag)
	case s.Joined:
		out = append(out, s.Flag+"="+value)
	default:
		out = append(out, s.Flag, value)
	}
	return out
}

// Allow returns the words a refusal ends with to name what allows it:
// the flags (with value, or the placeholder when value is empty), then the
// Config field when value does not make the flag concrete, e.g.
// "--memory SIZE, Limits.MemoryBytes", "--allow-local 10.1.2.3",
// "--memory unlimited, Limits.MemoryBytes -1". An unknown id gives "".
func Allow(id, value string) string {
	s, ok := Lookup(id)
	if !ok {
		return ""
	}
	v := value
	if v == "" {
		v = s.Placeholder
	}
	out := strings.Join(s.Args(v), " ")
	switch {
	case value == Unlimited:
		out += ", " + s.Field + " -1"
	case value == "" || s.Placeholder == "":
		out += ", " + s.Field
	}
	return out
}
