//go:build !linux

package childproc

import "syscall"

// Attr puts the server in a process group of its own, so Stop reaches
// everything it forks and a Ctrl-C meant for a test run does not reach it
// half-way. (Only Linux can also tie its life to its parent's.)
func Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
