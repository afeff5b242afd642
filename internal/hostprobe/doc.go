// Package hostprobe reports what this host offers a sandbox, whatever its
// configuration: the kernel, Landlock, seccomp, user namespaces and the
// cgroup hierarchies, each missing one with a fix. moat doctor prints it.
// It imports nothing above it: neither moat nor its front ends.
package hostprobe
