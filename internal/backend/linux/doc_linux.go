// Package linux is moat's Linux backend: it enforces an internal/spec
// Policy with Landlock, seccomp, namespaces, rlimits and cgroups.
//
// Two kinds of process run this package's code, and each file's name says
// which:
//
//   - host_*: moat's own process, the embedder's. It turns the Policy into
//     a helper spec and a report (host_policy, host_level), probes the host
//     (host_probe), pins control paths (host_control), starts and talks to
//     the helpers (host_spawner, host_zygote) and serves the socket guard's
//     verdicts' bookkeeping (host_sockguard). Engine (host_engine) is the
//     spec.Backend.
//   - helper_*: the sandbox's own processes, started by re-executing the
//     program with HelperEnv set (helper_main). The zygote builds the
//     namespaces, mounts, Landlock ruleset and seccomp filter and forks
//     every command (helper_zygote, helper_mounts, helper_landlock,
//     helper_seccomp, helper_sockguard); the init is PID 1, reaps orphans
//     and watches memory (helper_init, helper_memwatch, helper_kmem).
//
// Files with neither prefix are shared by both sides: the messages they
// exchange (wire), the DNS stub whose listener the zygote opens and the
// host serves (dnsstub), and small utilities.
package linux
