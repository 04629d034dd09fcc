//go:build !linux

package sched

func gettid() int { return 0 }

func preciseTimers() {}
