package sbpl

// The base every sandboxed process needs, written for what moat runs:
// shells, compilers, interpreters, package managers. Each list says what
// needs it; anything left out is denied by (deny default).

// sysctlNames are the sysctls a process may read: the CPU, memory and
// page sizes that runtimes size themselves by (Go, Python, the JVM, libc's
// sysconf), the kernel's identity that uname and version checks read, and
// the load average. Process tables (kern.proc, kern.procargs2, which holds
// the environment of every process of the user) are not among them.
var sysctlNames = []string{
	"hw.activecpu", "hw.byteorder", "hw.cachelinesize", "hw.cpufamily", "hw.cpusubtype",
	"hw.cputype", "hw.l1dcachesize", "hw.l1icachesize", "hw.l2cachesize", "hw.l3cachesize",
	"hw.logicalcpu", "hw.logicalcpu_max", "hw.machine", "hw.memsize", "hw.model", "hw.ncpu",
	"hw.nperflevels", "hw.packages", "hw.pagesize", "hw.pagesize_compat", "hw.physicalcpu",
	"hw.physicalcpu_max", "hw.tbfrequency", "hw.vectorunit",
	"kern.argmax", "kern.boottime", "kern.hostname", "kern.maxfiles", "kern.maxfilesperproc",
	"kern.maxproc", "kern.ngroups", "kern.osproductversion", "kern.osrelease", "kern.ostype",
	"kern.osversion", "kern.osvariant_status", "kern.secure_kernel", "kern.usrstack64",
	"kern.version",
	"machdep.ptrauth_enabled",
	"sysctl.proc_cputype", "sysctl.proc_native", "sysctl.proc_translated",
	"vm.loadavg",
}

// sysctlPrefixes are families of sysctls read the same way: CPU features
// (Go's and OpenSSL's feature detection), performance levels, Intel's CPU
// description.
var sysctlPrefixes = []string{"hw.optional.", "hw.perflevel", "machdep.cpu."}

// machServices are the Mach services a process may look up: user and
// group lookups (getpwuid, which git, ssh and Python's expanduser call),
// group membership, preferences (CoreFoundation tools), notifications
// (libc's time zone and configuration changes), logging, and the per-user
// temp directory's name (confstr). cfprefsd answers only for domains the
// profile lets the client read (user-preference-read, never allowed), so
// other applications' preferences stay out of reach.
var machServices = []string{
	"com.apple.bsd.dirhelper",
	"com.apple.system.opendirectoryd.libinfo",
	"com.apple.system.opendirectoryd.membership",
	"com.apple.cfprefsd.daemon",
	"com.apple.cfprefsd.agent",
	"com.apple.system.notification_center",
	"com.apple.logd",
	"com.apple.system.logger",
	"com.apple.diagnosticd",
}

// networkServices are looked up only when the sandbox has a network:
// certificate trust evaluation for TLS through the proxy. Keychain access
// (com.apple.SecurityServer) is never among them.
var networkServices = []string{"com.apple.trustd", "com.apple.trustd.agent"}

// gpuClasses are the IOKit user clients of the GPU, and gpuServices the
// Metal services a GPU program looks up.
var (
	gpuClasses  = []string{"IOAccelerator", "IOAccelDevice", "IOAccelSharedUserClient", "IOAccelSubmitter2", "AGXDeviceUserClient", "AGXSharedUserClient", "IOSurfaceRootUserClient", "AppleGraphicsControlClient"}
	gpuServices = []string{"com.apple.MTLCompilerService", "com.apple.gpumemd.source"}
)

// npuClasses are the IOKit user clients of the Neural Engine, and
// npuServices the services Core ML reaches it through.
var (
	npuClasses  = []string{"H11ANEInDirectPathClient", "H11ANEInUserClient", "AppleNeuralEngineUserClient"}
	npuServices = []string{"com.apple.appleneuralengine", "com.apple.coreml.modelcompilerservice"}
)

// readDevices are the device files anything may read, and writeDevices
// those it may write: the sinks and sources of bytes and the controlling
// terminal (none, in the new session each command leads). /dev/ptmx is
// not among them: a new pseudo-terminal's device could not be told from
// the user's other terminals, so the sandbox cannot open one.
var (
	readDevices  = []string{"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/dtracehelper"}
	writeDevices = []string{"/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper"}
)

// serialRegex matches serial devices, opened only with AllowHardware. It
// is a constant, the profile's only regex: no path of the policy is ever
// written as one.
const serialRegex = `^/dev/(cu|tty)[.]`

// systemExec are the directories whose files run at the strict and default
// levels: the system's own, Apple's developer tools, applications, and
// the usual package-manager prefixes (Homebrew, MacPorts, Nix, Python.org
// frameworks). None is writable in the sandbox.
var systemExec = []string{
	"/bin", "/sbin", "/usr", "/System", "/Library/Apple", "/Library/Developer",
	"/Library/Frameworks", "/Applications", "/opt", "/nix", "/private/var/db/dyld",
}

// userDataRoots are denied outright at the strict and default levels:
// every home, mounted volumes, network mounts and root's home.
var userDataRoots = []string{"/Users", "/home", "/Volumes", "/Network", "/private/var/root"}

// SharedTempDirs are the shared temporary directories: never executable,
// unreadable at the strict level, unwritable below permissive. moat's own
// directories for a sandbox may lie inside them (the per-user temp of
// /private/var/folders) and are allowed explicitly.
var SharedTempDirs = []string{"/private/tmp", "/private/var/tmp", "/private/var/folders"}

// tccFolders are a home's folders that macOS guards with consent prompts.
var tccFolders = []string{"Desktop", "Documents", "Downloads", "Movies", "Music", "Pictures", "Library"}
