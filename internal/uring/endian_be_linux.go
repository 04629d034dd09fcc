//go:build linux && !(386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package uring

// tailWord is the 32-bit word of entry 0's bid and the ring's tail.
func tailWord(bid, tail uint16) uint32 { return uint32(bid)<<16 | uint32(tail) }
