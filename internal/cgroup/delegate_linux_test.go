package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeCgroupfs builds a cgroup v2 tree under a temporary mount point: each
// group gets cgroup.procs, cgroup.subtree_control and cgroup.controllers;
// groups listed in foreign are given to another user, as systemd leaves
// user.slice and the session scopes to root.
func fakeCgroupfs(t *testing.T, groups map[string]string, foreign []string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIPPING fake cgroupfs test: giving directories to another user needs root")
	}
	mount := t.TempDir()
	for g, controllers := range groups {
		dir := filepath.Join(mount, g)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, content := range map[string]string{"cgroup.procs": "", "cgroup.subtree_control": controllers, "cgroup.controllers": controllers} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, g := range foreign {
		dir := filepath.Join(mount, g)
		for _, p := range []string{dir, filepath.Join(dir, "cgroup.procs"), filepath.Join(dir, "cgroup.subtree_control")} {
			if err := os.Chown(p, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}
	}
	return mount
}

func TestFindDelegation(t *testing.T) {
	const svc = "/user.slice/user-1001.slice/user@1001.service"
	tree := map[string]string{
		"/":                           "memory pids cpu",
		"/user.slice":                 "memory pids cpu",
		"/user.slice/user-1001.slice": "memory pids cpu",
		"/user.slice/user-1001.slice/session-4.scope": "",
		svc:                           "memory pids",
		svc + "/app.slice":            "memory pids",
		svc + "/app.slice/term.scope": "",
		svc + "/init.scope":           "",
	}
	foreign := []string{"/", "/user.slice", "/user.slice/user-1001.slice", "/user.slice/user-1001.slice/session-4.scope"}
	cases := []struct {
		name    string
		own     string
		need    []string
		noMem   bool
		want    string // delegation root relative to the mount; "" means unavailable
		errWord string
	}{
		{"terminal under the user manager", svc + "/app.slice/term.scope", []string{"memory", "pids"}, false, svc, ""},
		{"the service itself", svc, []string{"memory"}, false, svc, ""},
		{"login session scope", "/user.slice/user-1001.slice/session-4.scope", []string{"memory"}, false, "", "not in a cgroup subtree delegated"},
		{"no memory controller delegated", svc + "/app.slice/term.scope", []string{"memory", "pids"}, true, "", "no memory controller"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mount := fakeCgroupfs(t, tree, foreign)
			if tc.noMem {
				if err := os.WriteFile(filepath.Join(mount, svc, "cgroup.controllers"), []byte("pids"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			d, err := findDelegation(mount, tc.own, os.Geteuid(), tc.need)
			if tc.want == "" {
				if err == nil || !strings.Contains(err.Error(), tc.errWord) || !isUnavailable(err) {
					t.Fatalf("findDelegation = %+v, %v; want an ErrUnavailable saying %q", d, err, tc.errWord)
				}
				return
			}
			if err != nil || d.dir != filepath.Join(mount, tc.want) || d.rel != tc.want {
				t.Fatalf("findDelegation = %+v, %v; want %s", d, err, tc.want)
			}
		})
	}
}

func isUnavailable(err error) bool {
	_, ok := err.(*unavailableError)
	return ok
}

// A delegated layout makes the group at the delegation root, in v2 only.
func TestDelegatedLayout(t *testing.T) {
	const svc = "/user.slice/user-1001.slice/user@1001.service"
	mount := fakeCgroupfs(t, map[string]string{
		"/": "memory pids", "/user.slice": "memory pids", "/user.slice/user-1001.slice": "memory pids",
		svc: "memory pids", svc + "/app.slice": "memory pids", svc + "/app.slice/x.scope": "",
	}, []string{"/", "/user.slice", "/user.slice/user-1001.slice"})
	own := svc + "/app.slice/x.scope"
	l := layout{
		v2:            &hierarchy{mount: mount, parent: filepath.Join(mount, own), rel: own},
		v2Controllers: []string{"memory", "pids"},
		v1:            map[string]*hierarchy{"freezer": {mount: "/nonexistent", parent: "/nonexistent"}},
	}
	dl, dir, err := l.delegated(os.Geteuid(), []string{"memory", "pids"})
	if err != nil || dir != filepath.Join(mount, svc) || dl.v2.parent != dir || dl.v2.rel != svc || dl.v1 != nil {
		t.Fatalf("delegated = %+v, %q, %v", dl, dir, err)
	}
	if l.v2.parent != filepath.Join(mount, own) {
		t.Fatal("delegated changed the original layout")
	}
	g, err := create(dl, "moat-test", nil, false)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, err := os.Stat(filepath.Join(mount, svc, "moat-test")); err != nil || g.V2FD() < 0 {
		t.Fatalf("group not made at the delegation root: %v", err)
	}
	if err := g.removeDirs(); err != nil {
		t.Fatal(err)
	}
	// A controller that only v1 has cannot be delegated.
	l.v2Controllers = []string{"pids"}
	l.v1["memory"] = &hierarchy{mount: "/nonexistent"}
	if _, _, err := l.delegated(os.Geteuid(), []string{"memory"}); err == nil || !isUnavailable(err) {
		t.Fatalf("delegated with memory on v1 = %v, want unavailable", err)
	}
}
