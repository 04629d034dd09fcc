// Package machine reads the box brk runs on: its CPU time and that of a
// thread (/proc/stat, schedstat), the process's own (getrusage), the CPUs
// the process may use (the cgroup's quota and the affinity mask), the
// server processes' CPU and memory (/proc/PID/stat), the servers that
// listen on a loopback port (sock_diag, /proc/net/tcp), and the box's
// other load in windows of OtherWindow. What it reads lands in
// internal/metrics types where a measurement holds it (metrics.OtherCPU,
// metrics.ProcessCPU). Outside Linux most readings report that they are
// unavailable.
//
// The files: cpu*.go and rusage*.go the CPU readers, cgroup*.go the usable
// CPUs, process*.go the server processes, listeners*.go the listening
// servers, otherload.go the other load, procfile.go the /proc parsing they
// share.
package machine
