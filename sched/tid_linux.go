//go:build linux

package sched

import "golang.org/x/sys/unix"

func gettid() int { return unix.Gettid() }
