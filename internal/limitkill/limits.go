package limitkill

// Limits are the limits FromExit needs to tell a kernel kill: those set as
// rlimits or job limits. Zero or less means none.
type Limits struct {
	// CPUSeconds is the CPU time limit (RLIMIT_CPU, the job's user time).
	CPUSeconds int64
	// FileSizeBytes is the file size limit (RLIMIT_FSIZE).
	FileSizeBytes int64
	// DiskBytes is the resolved disk limit, which RLIMIT_FSIZE bounds
	// too when less of it is left than the file size limit.
	DiskBytes int64
}
