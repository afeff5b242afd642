package hostinput

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
)

// hashFile returns the hex SHA-256 of f's content from its start, at most
// max bytes (0: no bound).
func hashFile(f *os.File, max int64) (string, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	var h hash.Hash = sha256.New()
	var r io.Reader = f
	if max > 0 {
		r = io.LimitReader(f, max+1)
	}
	n, err := io.Copy(h, r)
	if err != nil {
		return "", err
	}
	if max > 0 && n > max {
		return "", fmt.Errorf("larger than %s", sizeName(max))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sizeName spells n bytes as KiB or MiB where exact.
func sizeName(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// HashOf returns the hex SHA-256 of data, as pins hold it.
func HashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// PinOf returns the pin of the file at path as it is now: its real path
// and the SHA-256 of its content, at most max bytes (0: no bound). It
// judges nothing: the user vouches for what it pins.
func PinOf(path string, max int64) (Pin, error) {
	in, err := open(path, Options{Subject: "file"})
	if err != nil {
		return Pin{}, err
	}
	defer in.close()
	fi, err := in.f.Stat()
	if err != nil {
		return Pin{}, in.fail(err)
	}
	if !fi.Mode().IsRegular() {
		return Pin{}, in.fail(errors.New("not a regular file"))
	}
	sum, err := hashFile(in.f, max)
	if err != nil {
		return Pin{}, in.fail(err)
	}
	return Pin{Path: in.Real, Sum: sum}, nil
}

// RealPath returns path absolute with every link that exists followed, as
// pins name files.
func RealPath(path string) string { return resolvePlace(path) }
