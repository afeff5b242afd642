// Package moattest holds the helpers that moat's test suites share: the
// escape battery, the workloads and the package tests. Nothing in it is
// part of moat's API, and no production code imports it.
package moattest
