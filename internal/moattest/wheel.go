package moattest

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
)

// WheelFile is one file of a wheel: Name is its path inside the archive,
// Content what it holds.
type WheelFile struct {
	Name, Content string
}

// Wheel builds a minimal, valid pure-Python wheel (py3-none-any) of pkg at
// version: files, then the dist-info METADATA and WHEEL that name it, then
// the RECORD that lists them all with their digests, so pip installs it
// offline. files holds the package's modules and any extra dist-info files
// (entry_points.txt under DistInfo(pkg, version)).
func Wheel(pkg, version, summary string, files ...WheelFile) ([]byte, error) {
	info := DistInfo(pkg, version)
	files = append(files,
		WheelFile{info + "METADATA", "Metadata-Version: 2.1\nName: " + pkg + "\nVersion: " + version + "\nSummary: " + summary + "\n"},
		WheelFile{info + "WHEEL", "Wheel-Version: 1.0\nGenerator: moattest\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	)
	var record bytes.Buffer
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		w, err := zw.Create(f.Name)
		if err != nil {
			return nil, err
		}
		if _, err := io.WriteString(w, f.Content); err != nil {
			return nil, err
		}
		sum := sha256.Sum256([]byte(f.Content))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.Name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.Content))
	}
	record.WriteString(info + "RECORD,,\n")
	w, err := zw.Create(info + "RECORD")
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(record.Bytes()); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DistInfo is the dist-info directory of pkg at version inside its wheel,
// with a trailing slash.
func DistInfo(pkg, version string) string {
	return pkg + "-" + version + ".dist-info/"
}
