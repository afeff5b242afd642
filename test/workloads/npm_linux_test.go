//go:build linux

package workloads_test

import (
	"strings"
	"testing"
)

// npmProject is a project whose test script calls the bin of a local
// package, which the sandbox packs and installs from the tarball.
var npmProject = map[string]string{
	"hello/package.json": `{"name": "moat-wl-hello", "version": "1.0.0", "bin": {"moat-wl-hello": "cli.js"}}
`,
	"hello/cli.js*": "#!/usr/bin/env node\nconsole.log('hello from bin ' + process.argv.slice(2).join(' '));\n",
	"package.json": `{"name": "wl-app", "version": "1.0.0", "private": true, "scripts": {"test": "moat-wl-hello tested"}}
`,
}

// npm pack, npm install of the local tarball and npm test, offline: the
// bin runs from node_modules/.bin, a link into node_modules written by
// npm, so npm test passes only in build mode.
func TestNpmBin(t *testing.T) {
	need(t, "npm", "node")
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, npmProject)
			sb := newSandbox(t, config(dir, m.build))
			r := run(t, sb, "hello", "npm", "pack", "--offline")
			mustPass(t, "npm pack", r)
			mustPass(t, "npm install", run(t, sb, "", "npm", "install", "--offline", "--no-audit", "--no-fund", "./hello/moat-wl-hello-1.0.0.tgz"))
			r = run(t, sb, "", "npm", "test")
			if m.build {
				mustPass(t, "npm test", r)
				if !strings.Contains(r.Out, "hello from bin tested") {
					t.Fatalf("npm test did not run the bin: %s", r)
				}
				return
			}
			wxRefused(t, "npm test", r)
		})
	}
}
