// Package hostview decides what of the host a sandbox sees, from its
// isolation level and protections: the users' homes (which entries show,
// which stay hidden) and the shared temporary directories. It is where an
// isolation level gets its meaning for every backend, which then enforces
// the answer (internal/spec.View).
//
// It reads the host (a home's entries, /tmp's files) but changes nothing,
// and it works the same on any OS; its tests run everywhere.
package hostview
