package moat

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// passwdEntry returns the fields of the effective user's line in
// /etc/passwd, or nil. It does not use os/user, whose cgo variant would
// make every program that imports moat, and so every sandbox helper, a
// dynamically linked binary that starts more slowly.
func passwdEntry() []string {
	uid := strconv.Itoa(os.Geteuid())
	f, err := os.Open("/etc/passwd")
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Split(sc.Text(), ":"); len(fields) > 2 && fields[2] == uid {
			return fields
		}
	}
	return nil
}

// currentUserName finds the name of the effective user: /etc/passwd, else
// $USER, else "uid" and the number.
func currentUserName() string {
	if e := passwdEntry(); e != nil && e[0] != "" {
		return e[0]
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "uid" + strconv.Itoa(os.Geteuid())
}

// passwdHome finds the home directory of the effective user in /etc/passwd.
func passwdHome() string {
	if e := passwdEntry(); len(e) > 5 && filepath.IsAbs(e[5]) {
		return e[5]
	}
	return ""
}
