//go:build !linux

package contract

import "syscall"

func childAttr() *syscall.SysProcAttr { return nil }
