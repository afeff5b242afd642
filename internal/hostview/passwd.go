package hostview

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// PasswdEntry returns the fields of the effective user's line in
// /etc/passwd, or nil. It does not use os/user, whose cgo variant would
// make every program that imports moat, and so every sandbox helper, a
// dynamically linked binary that starts more slowly.
func PasswdEntry() []string {
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

// UserName finds the name of the effective user: /etc/passwd, else
// $USER, else "uid" and the number.
func UserName() string {
	if e := PasswdEntry(); e != nil && e[0] != "" {
		return e[0]
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "uid" + strconv.Itoa(os.Geteuid())
}

// PasswdHome finds the home directory of the effective user in /etc/passwd.
func PasswdHome() string {
	if e := PasswdEntry(); len(e) > 5 && filepath.IsAbs(e[5]) {
		return e[5]
	}
	return ""
}
