package windows

import (
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MachineVars are the host variables that describe the machine, not the
// user, and that Windows programs expect (the C runtime, cmd.exe, Python
// and Go read several of them): added from the host when the command's
// environment lacks them. None of them holds a secret or a user path.
var MachineVars = []string{
	"SystemRoot", "SystemDrive", "windir", "ComSpec", "PATHEXT", "OS",
	"NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE", "PROCESSOR_IDENTIFIER",
	"PROCESSOR_LEVEL", "PROCESSOR_REVISION",
	"ProgramFiles", "ProgramFiles(x86)", "ProgramW6432",
	"CommonProgramFiles", "CommonProgramFiles(x86)", "CommonProgramW6432", "ProgramData",
}

// envName is the name of a NAME=VALUE entry. A leading "=" belongs to the
// name, as in the per-drive "=C:=C:\dir" entries.
func envName(kv string) string {
	i := strings.IndexByte(kv[min(1, len(kv)):], '=')
	if i < 0 {
		return kv
	}
	return kv[:i+min(1, len(kv))]
}

// ContainerEnv is the environment a command runs with in the container,
// from env, the one package moat built (its last entry for a name wins):
//   - TEMP, TMP and TMPDIR that name moat's private temp (hostTmp) or are
//     missing name the container's own temp instead (containerTemp), a
//     directory under %LOCALAPPDATA%\Packages that Windows gives the
//     AppContainer alone; a value the caller chose is kept;
//   - USERPROFILE, when missing, is HOME (the sandbox's private home);
//   - the MachineVars missing are taken from lookup (the host's);
//   - the result is deduplicated and sorted without regard to case, as
//     CreateProcess wants an environment block (unsorted, it fails with
//     ERROR_ENVVAR_NOT_FOUND in an AppContainer).
func ContainerEnv(env []string, hostTmp, containerTemp string, lookup func(string) (string, bool)) []string {
	byName := map[string]string{} // upper-case name -> entry
	set := func(kv string) { byName[strings.ToUpper(envName(kv))] = kv }
	get := func(name string) (string, bool) {
		kv, ok := byName[strings.ToUpper(name)]
		if !ok {
			return "", false
		}
		return kv[len(envName(kv))+1:], true
	}
	for _, kv := range env {
		if strings.Contains(kv[min(1, len(kv)):], "=") {
			set(kv)
		}
	}
	if containerTemp != "" {
		for _, name := range []string{"TEMP", "TMP", "TMPDIR"} {
			if v, ok := get(name); !ok || (hostTmp != "" && strings.EqualFold(v, hostTmp)) {
				set(name + "=" + containerTemp)
			}
		}
	}
	if _, ok := get("USERPROFILE"); !ok {
		if h, ok := get("HOME"); ok {
			set("USERPROFILE=" + h)
		}
	}
	for _, name := range MachineVars {
		if _, ok := get(name); ok || lookup == nil {
			continue
		}
		if v, ok := lookup(name); ok {
			set(name + "=" + v)
		}
	}
	out := make([]string, 0, len(byName))
	for _, kv := range byName {
		out = append(out, kv)
	}
	SortEnv(out)
	return out
}

// SortEnv sorts NAME=VALUE entries as an environment block must be: by
// name, without regard to case (upper-cased, in code-point order).
func SortEnv(env []string) {
	sort.SliceStable(env, func(i, j int) bool {
		return strings.ToUpper(envName(env[i])) < strings.ToUpper(envName(env[j]))
	})
}

// EnvBlock is env as the UTF-16 block CreateProcess takes with
// CREATE_UNICODE_ENVIRONMENT: each entry NUL-terminated, then one more
// NUL. It refuses (an error matching ErrCommandLine) an entry with a NUL,
// without a name and "=", or that is not UTF-8.
func EnvBlock(env []string) ([]uint16, error) {
	var block []uint16
	for _, kv := range env {
		if strings.IndexByte(kv, 0) >= 0 {
			return nil, &cmdlineError{kv, "an environment entry holds a NUL"}
		}
		if !utf8.ValidString(kv) {
			return nil, &cmdlineError{kv, "an environment entry is not valid UTF-8"}
		}
		if n := envName(kv); n == "" || n == kv {
			return nil, &cmdlineError{kv, "an environment entry without NAME="}
		}
		block = append(block, utf16.Encode([]rune(kv))...)
		block = append(block, 0)
	}
	if len(block) == 0 {
		block = append(block, 0)
	}
	return append(block, 0), nil
}
