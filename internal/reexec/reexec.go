// Package reexec selects moat's helper role, or a session's file server
// (internal/fileserve), when the current binary is
// re-executed by moat. Importing it (moat does) is all a program needs: the
// check runs in this package's init function, before main, and looks only at
// an environment marker, never at the program's argv.
package reexec
