// Package aclplan decides which NTFS access-control entries a Windows
// sandbox's AppContainer SID gets, from its policy, as plain data: paths,
// kinds, scopes and named rights. It does no I/O and has no build tags, so
// its plans are golden-tested on any host; the Windows backend
// (internal/backend/windows) installs a plan with SetEntriesInAcl and
// SetNamedSecurityInfo, and revokes it at Close.
//
// The rules, in Build's order:
//   - the working directory is readable and writable, never executable
//     (build mode makes it executable too);
//   - a grant is readable, writable with Write, and its files executable
//     with Exec; a writable grant's files get no execute unless Exec asks;
//   - build scratch directories are writable and executable;
//   - moat's private temp and home are writable, not executable;
//   - the AppContainer's own folder, which holds its temp (TEMP, TMP),
//     loses execute on its files;
//   - the level's home toolchain paths are readable and executable;
//   - protected paths inside a grant, and Deny paths, are denied; ReadOnly
//     paths lose every right that changes them; where the container may
//     remove entries of their parent directory, that right is denied on
//     the parent.
//
// Directories get three entries (the directory, the directories below,
// the files below) because NTFS uses one bit for "traverse" and "execute".
// No entry carries WRITE_DAC or WRITE_OWNER.
package aclplan
