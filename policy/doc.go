// Package policy reads moat's TOML config file and layers it with other
// sources of settings, such as command-line flags, into a [moat.Config].
//
// A config file looks like this; every key is optional, and an unknown key
// is an error that names its line:
//
//	isolation = "default"            # strict, default or permissive
//	network = "allow-list"           # deny, allow-all (heel's allow) or allow-list
//	allow-domains = ["*.crates.io", "example.com:443"]
//	allow-local = ["10.0.0.0/8"]     # private addresses the proxy may dial
//	audit-log = "net.jsonl"          # needs a network other than deny
//	audit-rotate = "daily"
//	home = "~/.cache/moat-home"      # kept HOME, so caches survive runs
//
//	[security]
//	protect-credentials = false
//	protect-shell-history = true       # and protect-package-credentials
//	allow-gpu = true
//	allow-npu = false                  # and allow-hardware, allow-tcc-prompts
//	protect-keychain = true            # heel's spelling of protect-keychains
//
//	[grants]                         # r, rw, rx or rwx
//	"/usr/share" = "r"
//	"./target" = "rwx"               # relative to this file's directory
//	"~/.cache/pip" = "rw"            # ~/ is $HOME
//
//	[limits]
//	max-memory = "2G"
//	max-cpu-time = 600
//	max-file-size = "1G"
//	max-processes = 256
//	max-open-files = 1024
//	max-disk = "unlimited"
//	timeout = "10m"
//	nice = 10
//	io-priority = "background"
//
//	[workdir]
//	path = "./job"                   # created, 0700, if missing; kept
//	keep = true                      # without path: keep the fresh one
//
//	[env]
//	passthrough = ["TERM", "LANG"]
//	set = { PYTHONHASHSEED = "0" }
//
// [Load] and [Parse] give a [File]; [File.Layer] and a [Layer] built from
// flags go to [Merge], which applies heel's rules: a scalar of a later layer
// beats an earlier one, lists concatenate, grants of one path are unioned,
// and the protections are the isolation level's preset, then each layer's
// [moat.SecurityOverrides] in turn. [Result.Resolve] then finishes the one
// [Result] of every front end into the Config that [moat.New] is given:
// paths resolved, places checked, [moat.Config.Validate] passed, the
// network policy built and its audit log opened; a missing working
// directory is created first, and removed again if Resolve fails. [Build]
// does both. [LoadFrom] reads a file from a reader, such as standard input
// for --config -.
//
// [ReadDocument] reads the closed JSON policy document of moat exec
// (Heimdall's fields and moat's own; [DocumentSchema] is its JSON
// Schema), and [Document.Exec] turns it into a Config through the same
// Layer, Merge and Resolve.
//
// The package depends on the TOML decoder; package moat itself does not.
package policy
