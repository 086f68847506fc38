package childproc

import "syscall"

// Attr puts the server in a process group of its own, so Stop reaches
// everything it forks and a Ctrl-C meant for a test run does not reach it
// half-way, and has the kernel kill it if the process that started it dies
// first (a test binary killed at its -timeout), so no server outlives its
// test.
func Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
