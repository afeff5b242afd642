//go:build !unix

package venv

// oNoFollow is 0 where open has no O_NOFOLLOW.
const oNoFollow = 0
