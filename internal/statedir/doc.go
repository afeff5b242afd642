// Package statedir makes and removes a sandbox's host directories: its
// state directory (private temp, private home, build scratch, owner
// marker), its automatic working directory, and the sweep that removes
// those a crashed process left behind. Errors name their subject without
// the "moat:" prefix, which package moat adds.
package statedir
