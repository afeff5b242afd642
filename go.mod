module github.com/moat-sandbox/moat

go 1.26.0

require (
	github.com/landlock-lsm/go-landlock v0.11.2
	golang.org/x/net v0.62.0
	golang.org/x/sys v0.50.0
)

require (
	golang.org/x/term v0.48.0 // indirect
	kernel.org/pub/linux/libs/security/libcap/psx v1.2.78 // indirect
)
