package moat

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// currentUserName finds the name of the effective user in /etc/passwd.
// It does not use os/user, whose cgo variant would make every program that
// imports moat, and so every sandbox helper, a dynamically linked binary
// that starts more slowly.
func currentUserName() string {
	uid := strconv.Itoa(os.Geteuid())
	if f, err := os.Open("/etc/passwd"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Split(sc.Text(), ":")
			if len(fields) > 2 && fields[2] == uid && fields[0] != "" {
				return fields[0]
			}
		}
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "uid" + uid
}

// passwdHome finds the home directory of the effective user in /etc/passwd.
func passwdHome() string {
	uid := strconv.Itoa(os.Geteuid())
	f, err := os.Open("/etc/passwd")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) > 5 && fields[2] == uid && filepath.IsAbs(fields[5]) {
			return fields[5]
		}
	}
	return ""
}
