//go:build !unix

package quarantine

// oNoFollow is 0 where open has no O_NOFOLLOW; the type check after the
// open still refuses anything but a regular file.
const oNoFollow = 0
