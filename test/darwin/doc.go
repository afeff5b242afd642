// Package darwin holds the tests that run moat's macOS backend for real:
// Heimdall's Seatbelt cases M1-M17 and the guarantees docs/platforms.md
// lists. Every test file is built for darwin only; on other systems the
// package has nothing to run. Build them anywhere with
//
//	GOOS=darwin go test -c -o /dev/null ./test/darwin
//
// and run them on a macOS host, as an ordinary user, with go test.
package darwin
