// Package spec is the resolved policy that every backend enforces, and
// the interface through which package moat drives a backend.
//
// Package moat turns a public Config into one Policy (its backend.go is
// the only place that does), after checking it and preparing the host:
// paths resolved and identified, the home's view decided, private
// directories made, the proxy started. A backend (internal/backend/linux
// today; macOS and Windows later) receives that Policy and answers with
// a Backend: what it enforces (Report), what it cannot (Missing) and the
// commands it starts. Nothing here does I/O, and spec imports nothing from
// the module, so any backend can depend on it.
package spec
