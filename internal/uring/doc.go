// Package uring is the part of Linux's io_uring that brk's engine uses:
// one ring per worker thread (SINGLE_ISSUER, DEFER_TASKRUN), submission
// and completion queues, a provided-buffer ring for multishot receives
// (its buffers filled in pieces where the kernel can), and the few operations the engine needs (receive, send, poll, cancel).
// It speaks to the kernel through golang.org/x/sys/unix, without cgo, and
// builds only on Linux; elsewhere Available reports false.
//
// The ring and the buffers the kernel writes into are mmap'd memory, out
// of the Go heap; a buffer the kernel reads from (a send's) is the
// caller's, and must stay untouched until its completion.
package uring
