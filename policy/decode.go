package policy

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// rawFile is the shape of a config file. Leaves are `any` so that the
// checker, not the decoder, says what type it wants; tables are structs so
// that strict decoding rejects unknown keys.
type rawFile struct {
	Network      any            `toml:"network"`
	AllowDomains any            `toml:"allow-domains"`
	AllowLocal   any            `toml:"allow-local"`
	AuditLog     any            `toml:"audit-log"`
	AuditRotate  any            `toml:"audit-rotate"`
	Isolation    any            `toml:"isolation"`
	Security     *rawSecurity   `toml:"security"`
	Grants       map[string]any `toml:"grants"`
	Limits       *rawLimits     `toml:"limits"`
	WorkDir      *rawWorkDir    `toml:"workdir"`
	Home         any            `toml:"home"`
	Env          *rawEnv        `toml:"env"`
	Build        any            `toml:"build"`
	Python       *rawPython     `toml:"python"`
}

// rawSecurity is [security]: moat.SecurityOverrides in kebab-case.
type rawSecurity struct {
	ProtectUserHome    any `toml:"protect-user-home"`
	ProtectCredentials any `toml:"protect-credentials"`
	ProtectCloudConfig any `toml:"protect-cloud-config"`
	ProtectBrowserData any `toml:"protect-browser-data"`
	ProtectKeychains   any `toml:"protect-keychains"`
	AllowGPU           any `toml:"allow-gpu"`
	// heel.go: heel's keys moat lacked, and its spelling of one it had.
	ProtectShellHistory       any `toml:"protect-shell-history"`
	ProtectPackageCredentials any `toml:"protect-package-credentials"`
	AllowNPU                  any `toml:"allow-npu"`
	AllowHardware             any `toml:"allow-hardware"`
	AllowTCCPrompts           any `toml:"allow-tcc-prompts"`
	ProtectKeychain           any `toml:"protect-keychain"`
}

// rawLimits is [limits].
type rawLimits struct {
	MaxMemory     any `toml:"max-memory"`
	MaxCPUTime    any `toml:"max-cpu-time"`
	MaxFileSize   any `toml:"max-file-size"`
	MaxProcesses  any `toml:"max-processes"`
	MaxOpenFiles  any `toml:"max-open-files"`
	MaxDisk       any `toml:"max-disk"`
	MaxDiskInodes any `toml:"max-disk-inodes"`
	Timeout       any `toml:"timeout"`
	Nice          any `toml:"nice"`
	IOPriority    any `toml:"io-priority"`
}

// rawWorkDir is [workdir].
type rawWorkDir struct {
	Path any `toml:"path"`
	Keep any `toml:"keep"` // heel.go
}

// rawEnv is [env].
type rawEnv struct {
	Passthrough any            `toml:"passthrough"`
	Set         map[string]any `toml:"set"`
}

// decode decodes data strictly into a rawFile. Its errors are *Error with
// the line: an unknown key, a TOML syntax error, or a value where a table
// belongs.
func decode(name string, data []byte) (*rawFile, error) {
	var raw rawFile
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(&raw)
	if err == nil {
		return &raw, nil
	}
	var missing *toml.StrictMissingError
	if errors.As(err, &missing) && len(missing.Errors) > 0 {
		first := missing.Errors[0]
		line, _ := first.Position()
		msg := fmt.Sprintf("unknown key %q", strings.Join(first.Key(), "."))
		if n := len(missing.Errors) - 1; n > 0 {
			msg += fmt.Sprintf(" (and %d more)", n)
		}
		return nil, &Error{File: name, Line: line, Err: errors.New(msg)}
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, _ := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		if key := strings.Join(de.Key(), "."); key != "" && strings.HasPrefix(msg, "cannot ") {
			// A value or an array of tables where a table belongs: the
			// decoder's message names Go types, which mean nothing here.
			msg = fmt.Sprintf("%s: want a table", key)
		}
		return nil, &Error{File: name, Line: line, Err: errors.New(msg)}
	}
	return nil, &Error{File: name, Err: err}
}
