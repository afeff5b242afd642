package cachehome

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/moat-sandbox/moat/internal/hostiletree"
)

// Layout is where the stores and their records live. The zero value
// names no place; [Open] and [Prune] refuse it.
type Layout struct {
	// Root holds the stores, one directory per key: CACHE/moat/homes.
	// It must not be visible to a sandbox except through the store a run
	// is granted, and must lie outside every working directory.
	Root string
	// Records holds the records, the locks and the key secret: a
	// directory in moat's state directory, which no sandbox sees.
	Records string
}

// trashName is the directory under Root where stores wait to be removed.
const trashName = ".trash"

// secretName is the key secret's file in Records.
const secretName = "secret"

// DefaultRoot returns where the stores live: $XDG_CACHE_HOME/moat/homes
// when xdgCache is absolute, else home/.cache/moat/homes. An empty or
// relative home is an error.
func DefaultRoot(xdgCache, home string) (string, error) {
	if filepath.IsAbs(xdgCache) {
		return filepath.Join(xdgCache, "moat", "homes"), nil
	}
	if !filepath.IsAbs(home) {
		return "", errors.New("cache homes: no cache directory (set XDG_CACHE_HOME or HOME)")
	}
	return filepath.Join(home, ".cache", "moat", "homes"), nil
}

// Project is the project a store belongs to: the working directory's
// resolved path and its identity, so a directory removed and made again
// at the same path is a new project, even where the file system hands it
// the old inode number. [Identify] returns it. The zero value is no
// project; its key is of no working directory.
type Project struct {
	Path     string
	Dev, Ino uint64
	// Born is the directory's birth as the file system keeps it (birth
	// time, inode generation); empty means unknown.
	Born string
}

// ErrBusy is returned by [Open] when another run holds the key's stores.
// The caller gives that run a throwaway home instead.
var ErrBusy = errors.New("cache homes: another run uses this project's caches")

// Lease is one run's hold on its key's stores, from [Open] to
// [Lease.Close]. The zero value is not usable.
type Lease struct {
	layout Layout
	rec    Record
	lock   *lockFile
	stores []string // in the order of Dirs
}

// Open takes the stores of project and policy (a [Digest]'s Sum) for one
// run: it locks the key, so no other run and no prune uses the stores
// while this one does, records the key (never in the stores), and makes
// the store directories (0700). It records l.Root among the roots
// [Roots] lists first. Another run holding the key is [ErrBusy].
func Open(l Layout, project Project, policy string) (*Lease, error) {
	if !filepath.IsAbs(l.Root) || !filepath.IsAbs(l.Records) {
		return nil, errors.New("cache homes: no place for the stores")
	}
	if err := privateDirAll(l.Records); err != nil {
		return nil, fmt.Errorf("cache homes: records %q: %w", l.Records, err)
	}
	// Recorded before the root is made: whatever a run leaves there,
	// every later sandbox's view hides it (Roots).
	if err := recordRoot(l.Records, l.Root); err != nil {
		return nil, fmt.Errorf("cache homes: roots record: %w", err)
	}
	if err := privateDirAll(l.Root); err != nil {
		return nil, fmt.Errorf("cache homes: %q: %w", l.Root, err)
	}
	secret, err := loadSecret(l.Records)
	if err != nil {
		return nil, fmt.Errorf("cache homes: key secret: %w", err)
	}
	key := Key(secret, project, policy)
	lk, err := tryLock(filepath.Join(l.Records, key+lockSuffix))
	if err != nil {
		return nil, fmt.Errorf("cache homes: lock: %w", err)
	}
	if lk == nil {
		return nil, ErrBusy
	}
	rec, err := readRecord(l.Records, key)
	if err != nil || rec.WorkDir != project.Path || rec.Dev != project.Dev || rec.Ino != project.Ino || rec.Born != project.Born || rec.Policy != policy {
		rec = Record{Key: key, WorkDir: project.Path, Dev: project.Dev, Ino: project.Ino, Born: project.Born, Policy: policy}
	}
	rec.LastUse = time.Now().UTC()
	if err := writeRecord(l.Records, rec); err != nil { // before the store exists: a prune never takes it for an orphan
		lk.release()
		return nil, fmt.Errorf("cache homes: %w", err)
	}
	lease := &Lease{layout: l, rec: rec, lock: lk}
	top := filepath.Join(l.Root, key)
	if err := hostDir(top); err != nil {
		lk.release()
		return nil, fmt.Errorf("cache homes: store %q: %w", top, err)
	}
	for _, d := range Dirs {
		p := filepath.Join(top, d.Name)
		if err := hostDir(p); err != nil {
			lk.release()
			return nil, fmt.Errorf("cache homes: store %q: %w", p, err)
		}
		lease.stores = append(lease.stores, p)
	}
	return lease, nil
}

// Key is the store key of project and policy under secret: 32 hex digits
// of an HMAC-SHA256, so it says nothing about the policy's values (an
// environment variable's, say) to whoever sees only the key.
func Key(secret []byte, project Project, policy string) string {
	m := hmac.New(sha256.New, secret)
	var n [8]byte
	for _, s := range []string{"moat cache home v2", project.Path, project.Born, policy} {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		m.Write(n[:])
		m.Write([]byte(s))
	}
	binary.BigEndian.PutUint64(n[:], project.Dev)
	m.Write(n[:])
	binary.BigEndian.PutUint64(n[:], project.Ino)
	m.Write(n[:])
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// Key returns the lease's key.
func (l *Lease) Key() string { return l.rec.Key }

// Stores returns the store directories, in the order of [Dirs].
func (l *Lease) Stores() []string { return append([]string(nil), l.stores...) }

// Link makes each cache directory's usual place in home (a fresh home the
// host just made, which no sandbox has run in yet) a link to its store,
// making the directories on the way (0700).
func (l *Lease) Link(home string) error {
	for i, d := range Dirs {
		at := filepath.Join(home, d.Rel)
		if err := os.MkdirAll(filepath.Dir(at), 0o700); err != nil {
			return fmt.Errorf("cache homes: %w", err)
		}
		if err := os.Symlink(l.stores[i], at); err != nil {
			return fmt.Errorf("cache homes: %w", err)
		}
	}
	return nil
}

// Close records the stores' size and this use, and releases the key. The
// measure walks the stores as hostile input, at any depth, within budget
// entries (zero means [MeasureBudget]); a store it could not measure in
// full is recorded partial, which [Prune] retires. Later calls do
// nothing.
func (l *Lease) Close(budget int) error {
	if l == nil || l.lock == nil {
		return nil
	}
	defer func() { l.lock.release(); l.lock = nil }()
	if budget <= 0 {
		budget = MeasureBudget
	}
	size, complete := hostiletree.Measure(filepath.Join(l.layout.Root, l.rec.Key), budget)
	l.rec.Size, l.rec.SizePartial = size, !complete
	l.rec.LastUse = time.Now().UTC()
	if err := writeRecord(l.layout.Records, l.rec); err != nil {
		return fmt.Errorf("cache homes: %w", err)
	}
	return nil
}

// ownDir checks, without following a link, that dir is a directory of
// this user's, and returns what Lstat said of it.
func ownDir(dir string) (fs.FileInfo, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, errors.New("not a directory")
	}
	if !ownedByMe(fi) {
		return nil, errors.New("belongs to another user")
	}
	return fi, nil
}

// hostDir makes dir (0700) if missing, checks it is a directory of this
// user's, not a link, and makes its mode 0700 again.
func hostDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := ownDir(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm() != 0o700 {
		// A run may chmod its own store (Landlock does not govern
		// modes); the next one gets it back usable. Lstat said it is a
		// directory, in a parent no sandbox can write.
		return os.Chmod(dir, 0o700)
	}
	return nil
}

// privateDirAll makes dir and its missing parents (0700) and checks that
// dir is a directory of this user's that nobody else may write.
func privateDirAll(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := ownDir(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return errors.New("writable by others")
	}
	return nil
}

// loadSecret returns the key secret in dir, making it on first use. It is
// published whole with a link, so a concurrent run never reads half of it.
func loadSecret(dir string) ([]byte, error) {
	p := filepath.Join(dir, secretName)
	for range 3 {
		if b, err := readSecret(p); err == nil {
			return b, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		tmp, err := os.CreateTemp(dir, ".secret-*")
		if err != nil {
			return nil, err
		}
		_, werr := tmp.Write(b)
		if err := errors.Join(werr, tmp.Close()); err != nil {
			os.Remove(tmp.Name())
			return nil, err
		}
		err = os.Link(tmp.Name(), p)
		os.Remove(tmp.Name())
		if err == nil {
			return b, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}
	return nil, errors.New("could not be made")
}

func readSecret(p string) ([]byte, error) {
	f, err := openNoFollow(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 65))
	if err != nil {
		return nil, err
	}
	if len(b) != 32 {
		return nil, errors.New("not 32 bytes")
	}
	return b, nil
}
