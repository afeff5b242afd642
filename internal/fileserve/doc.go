// Package fileserve is the in-sandbox half of a session's file API
// (internal/session's Files): a small long-lived server, this same binary
// re-executed inside the session's sandbox with the marker [Env] set, that
// reads, writes, lists and stats files for the host. Running inside, it has
// exactly the sandbox's rights and view: its mount namespace, Landlock and
// seccomp. A path the sandbox cannot write, a control path or another
// session's files stay out of its reach for the same reasons they stay out
// of the sandbox's.
//
// On top of that, every path is resolved beneath the place it names (the
// working directory or a grant the host listed): openat2 with
// RESOLVE_BENEATH on Linux, [os.Root] elsewhere, so ".." and links cannot
// leave the place. Reads open with O_NONBLOCK|O_NOFOLLOW|O_NOCTTY and check
// the type on the open descriptor; writes make a new file beside the name
// and rename it over the name, so a hard link or a link at the name is
// replaced, never written through.
//
// The host and the server talk over the server's stdin and stdout in
// frames (wire.go): a 4-byte big-endian length, then one JSON object. The
// host treats every reply as hostile input.
package fileserve
