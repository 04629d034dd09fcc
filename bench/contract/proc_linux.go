//go:build linux

package contract

import "syscall"

// childAttr makes the child die with its parent.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
