package hostinput

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// trustName is the trust store's file under Store.Dir.
const trustName = "trusted"

// trustHeader opens every trust store.
const trustHeader = "moat-trust 1"

// Bounds of the trust store: its bytes and its entries.
const (
	maxTrustSize    = 1 << 20
	maxTrustEntries = 4096
)

// Pin is one trusted file: its real path and the SHA-256 of its content.
// The zero value trusts nothing.
type Pin struct {
	// Path is the file's absolute path, every link followed.
	Path string
	// Sum is the hex SHA-256 of its bytes.
	Sum string
}

// ParseTrust parses a trust store: the header line, then one pin a line,
// "SUM QUOTED-PATH". Anything else is an error, and so is a store over
// its bounds (1 MiB, 4096 pins).
func ParseTrust(data []byte) ([]Pin, error) {
	if len(data) > maxTrustSize {
		return nil, errors.New("larger than 1 MiB")
	}
	lines := bytes.Split(data, []byte("\n"))
	if len(lines) == 0 || string(lines[0]) != trustHeader {
		return nil, fmt.Errorf("line 1: want %q", trustHeader)
	}
	if last := lines[len(lines)-1]; len(last) == 0 {
		lines = lines[:len(lines)-1]
	} else {
		return nil, errors.New("no newline at the end")
	}
	var pins []Pin
	for i, l := range lines[1:] {
		if len(pins) == maxTrustEntries {
			return nil, fmt.Errorf("more than %d entries", maxTrustEntries)
		}
		sum, q, ok := strings.Cut(string(l), " ")
		if !ok || !validSum(sum) {
			return nil, fmt.Errorf("line %d: want a hex SHA-256, a space and a quoted path", i+2)
		}
		p, err := strconv.Unquote(q)
		if err != nil || !filepath.IsAbs(p) || filepath.Clean(p) != p || strings.ContainsRune(p, 0) {
			return nil, fmt.Errorf("line %d: want a quoted absolute clean path", i+2)
		}
		pins = append(pins, Pin{Path: p, Sum: sum})
	}
	return pins, nil
}

// FormatTrust writes pins as ParseTrust reads them, sorted.
func FormatTrust(pins []Pin) []byte {
	sort.Slice(pins, func(i, j int) bool {
		if pins[i].Path != pins[j].Path {
			return pins[i].Path < pins[j].Path
		}
		return pins[i].Sum < pins[j].Sum
	})
	var b bytes.Buffer
	b.WriteString(trustHeader + "\n")
	for _, p := range pins {
		b.WriteString(p.Sum + " " + strconv.Quote(p.Path) + "\n")
	}
	return b.Bytes()
}

// validSum reports whether s is 64 lowercase hex digits.
func validSum(s string) bool {
	if len(s) != 64 || strings.ToLower(s) != s {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// Pins returns the trusted files. A store that is missing holds none; one
// that cannot be read or parsed is an error, so that callers fail closed.
func (s Store) Pins() ([]Pin, error) {
	if s.Dir == "" {
		return nil, nil
	}
	b, err := readSmallOwn(filepath.Join(s.Dir, trustName), maxTrustSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	// A run that was granted the state directory could have forged pins.
	if past, perr := s.PastPlace(resolvePlace(s.Dir)); perr != nil || past != "" {
		if perr != nil {
			return nil, fmt.Errorf("trust store: %w", perr)
		}
		return nil, fmt.Errorf("trust store %q: it lies in %s, which a sandbox of an earlier run could write; remove it, then moat trust --forget-place %s and pin again", filepath.Join(s.Dir, trustName), past, past)
	}
	if err != nil {
		return nil, fmt.Errorf("trust store: %w", err)
	}
	pins, err := ParseTrust(b)
	if err != nil {
		return nil, fmt.Errorf("trust store %q: %w", filepath.Join(s.Dir, trustName), err)
	}
	return pins, nil
}

// Trusted reports whether the content with hex SHA-256 sum at the real
// path p is pinned.
func (s Store) Trusted(p, sum string) (bool, error) {
	pins, err := s.Pins()
	if err != nil {
		return false, err
	}
	for _, pin := range pins {
		if pin.Path == p && pin.Sum == sum {
			return true, nil
		}
	}
	return false, nil
}

// Trust pins pin, replacing any earlier pin of its path.
func (s Store) Trust(pin Pin) error {
	return s.update(func(pins []Pin) ([]Pin, error) {
		out := pins[:0]
		for _, p := range pins {
			if p.Path != pin.Path {
				out = append(out, p)
			}
		}
		if len(out) >= maxTrustEntries {
			return nil, fmt.Errorf("trust store: already %d entries; remove some with moat trust --remove", maxTrustEntries)
		}
		return append(out, pin), nil
	})
}

// Untrust removes the pins of the real path p and reports whether there
// was one.
func (s Store) Untrust(p string) (bool, error) {
	found := false
	err := s.update(func(pins []Pin) ([]Pin, error) {
		out := pins[:0]
		for _, pin := range pins {
			if pin.Path == p {
				found = true
				continue
			}
			out = append(out, pin)
		}
		return out, nil
	})
	return found, err
}

// update rewrites the trust store atomically with what change makes of
// its pins.
func (s Store) update(change func([]Pin) ([]Pin, error)) error {
	if s.Dir == "" {
		return errors.New("trust store: no state directory")
	}
	if err := privateDir(s.Dir); err != nil {
		return fmt.Errorf("trust store: state directory %q: %w", s.Dir, err)
	}
	pins, err := s.Pins()
	if err != nil {
		return err
	}
	pins, err = change(pins)
	if err != nil {
		return err
	}
	if err := writeMarker(filepath.Join(s.Dir, trustName), string(FormatTrust(pins))); err != nil {
		return fmt.Errorf("trust store: %w", err)
	}
	return nil
}
