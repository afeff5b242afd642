// Package cachehome keeps a sandbox's cache directories between runs, and
// nothing else of its home.
//
// The home a sandbox gets stays fresh and private each run. Only the
// directories in [Dirs] (the Go build and module caches, npm's _cacache,
// pip's cache, cargo's registry) are kept: each is a store directory on
// the host, granted to the sandbox writable and never executable, and
// linked from its usual place in the fresh home, so tools find it without
// extra variables. Config and start-up files (.gitconfig, .npmrc, pip.conf,
// .cargo/config.toml, shell rc files, ~/.config) are never kept, so a run
// cannot plant them for a later one.
//
// A store belongs to one key: the project (the working directory's path
// and identity) and a digest of the whole policy, under a per-user secret
// so a key tells nothing about the values it was computed from. A different
// policy never shares a store. Layout:
//
//	CACHE/moat/homes/KEY/NAME   the store of cache NAME (sandbox-writable)
//	CACHE/moat/homes/.trash/    stores being removed (host only)
//	STATE/cache-homes/KEY.rec   the record: identity, digest, last use, size
//	STATE/cache-homes/KEY.lock  held by the one run that uses the store
//	STATE/cache-homes/secret    the key secret
//
// CACHE is $XDG_CACHE_HOME or ~/.cache; STATE is moat's state directory,
// which no sandbox sees. Everything in a store is hostile input: the host
// only measures and removes it, by descriptor-relative walks that never
// follow a link, never open anything but a directory, make read-only
// directories writable before emptying them, and stop at a work budget
// (package hostiletree, shared with the quarantine).
package cachehome
