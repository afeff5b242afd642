// Package refusal holds what a sandbox was refused, or what moat undid at
// the end of a run: the [Refusal] value, the [List] that collects a
// sandbox's refusals each once, and the refusals the network hooks (the
// DNS stub and the proxy) and the supervisor's bounded record make. It
// depends on nothing of the module but internal/settings, internal/spec,
// internal/proxy and internal/hostpattern.
package refusal
