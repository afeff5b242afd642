package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// newVersionCmd builds "moat version".
func newVersionCmd(std stdio) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print moat's version",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(std.out, versionLine())
			return fail(err)
		},
	}
}

// versionLine reads "moat v1.2.3 (go1.26.0, linux/amd64)".
func versionLine() string {
	return fmt.Sprintf("moat %s (%s, %s/%s)", moduleVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// moduleVersion is the main module's version as the go command recorded
// it, or "devel" for a build from a source tree.
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
