// Package sbpl builds the Seatbelt profile (Apple's Sandbox Profile
// Language) that macOS's sandbox-exec enforces for one moat sandbox. It is
// a pure function from [Input] to [Profile]: no build tags, no I/O, so the
// profile is golden-tested on any OS; internal/backend/darwin gathers the
// host facts, builds the profile and hands it to /usr/bin/sandbox-exec.
//
// # Paths are parameters, never text
//
// Every path reaches the profile as a sandbox-exec parameter (-D KEY=VALUE)
// that the text names as (param "KEY"). The text is then made of constants
// this package writes, and a hostile path (a quote, a backslash, a
// parenthesis, a newline, a semicolon that would start an SBPL comment) can
// never end a string or open a rule: sandbox-exec hands the value to the
// profile as a string object, never as SBPL source. The only strings that
// appear literally are this package's own constants (service and sysctl
// names, device paths), written through [Quote], which escapes them as SBPL
// string syntax and refuses control characters. The profile uses no
// regular expression built from a path: every path is matched with literal
// or subpath, which compare bytes, so regex metacharacters in a name are
// plain characters. The one regex, for serial devices (opened only with AllowHardware), is
// a constant.
// A path that is not absolute and clean, holds a NUL, or is not valid
// UTF-8 (which Seatbelt's string matching is not documented to handle) is
// refused by [Build].
//
// # Order
//
// SBPL applies the last rule that matches an operation, so the profile is
// written from general to specific:
//
//  1. (deny default), then the base a process needs: fork, signals and
//     process information within the sandbox, named sysctls, terminals,
//     the standard devices, a few Mach services (user lookups,
//     preferences, notifications, logging; certificate trust only with a
//     network).
//  2. The level: every level reads the system (macOS's runtime layout, its
//     dyld caches and cryptexes, is not stably enumerable); strict and
//     default then deny the user data roots (/Users, /home, /Volumes,
//     /Network, /private/var/root) and shared temp; permissive makes
//     everything readable, writable and executable.
//  3. Executable roots at strict and default: the system directories, the
//     home's toolchain entries, grants with execute.
//  4. The contested paths, sorted by depth, so that the most specific path
//     wins: the working directory, the private directories, grants,
//     shared temp's readable files and the home's toolchain entries are
//     allowed; protected and denied paths, the folders macOS guards with
//     consent prompts and a hidden home are denied; read-only paths (the
//     git control paths among them) lose write; sealed directories deny
//     every entry that did not exist at start. At one depth a deny comes
//     first, so an explicit grant of the denied path itself, or of a path
//     inside it, beats the protection, while a protection inside a granted
//     directory beats the grant.
//  5. Write-xor-execute: nothing writable (the working directory, the
//     private directories, writable grants) nor shared temp may be run or
//     mapped executable; then the explicit rwx grants, build mode's
//     scratch and working directory are allowed again, last.
//  6. The helper binary (moat itself, re-executed to start the command),
//     readable and executable and never writable; metadata of every
//     ancestor of an allowed path, so that path resolution and getcwd
//     pass through a denied parent; the network.
//
// Every path is emitted in each form that names it: as given, with or
// without the /private prefix (/tmp, /var and /etc are links into
// /private), and through the data volume's firmlink
// (/System/Volumes/Data/...), so that a deny cannot be passed by naming
// another form.
package sbpl
