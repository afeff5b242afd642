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
//   - helper_*: the sandbox's own processes. The zygote is the program
//     re-executed with HelperEnv set (helper_main): it builds the
//     namespaces, mounts (helper_mounts, helper_attach,
//     helper_privatemount), Landlock ruleset and seccomp filter, forks
//     every command (helper_zygote, helper_landlock, helper_seccomp,
//     helper_sockguard) and watches the sandbox's memory (helper_memwatch,
//     helper_kmem). The init, PID 1, and the IPC namespace's holder are
//     raw children of the zygote that never exec and run no Go runtime
//     (helper_rawfork, helper_init, helper_ipcns): the init mounts /proc,
//     reaps orphans and kills the sandbox when asked.
//
// Files with neither prefix are shared by both sides: the messages they
// exchange (wire), the DNS stub whose listener the zygote opens and the
// host serves (dnsstub), and small utilities.
package linux
