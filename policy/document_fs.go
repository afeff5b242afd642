package policy

import (
	"fmt"
	"strings"

	"github.com/moat-sandbox/moat"
)

// applyDocumentFilesystem adds the cwd and the filesystem patterns of a
// policy document to cfg: [ApplyFilesystem] compiles the patterns and the
// cwd's fragment files, grants the cwd (read, or read-write when a broad
// writable pattern covers it) and the writable targets, and fills Deny,
// ReadOnly and Seal. A denied file with a name moat cannot deny (a hard
// link outside the cwd) refuses the policy unless fs.HardLinkGaps is
// HardLinkGapsWarn, which leaves them to the plan's warnings.
func applyDocumentFilesystem(cfg *moat.Config, cwd, home string, fs DocumentFilesystem) (*FilesystemPlan, error) {
	plan, err := applyFilesystem(cfg, cwd, home, fs.Deny, fs.Writable)
	if err != nil {
		return nil, err
	}
	if len(plan.HardLinkGaps) > 0 && fs.HardLinkGaps != HardLinkGapsWarn {
		return nil, fmt.Errorf("filesystem policy: denied file %s: its other names (hard links) lie outside the cwd or cannot be read, and would reach the same content undenied; remove those links, or set filesystem.hardLinkGaps to %q", strings.Join(plan.HardLinkGaps, ", "), HardLinkGapsWarn)
	}
	return plan, nil
}
