//go:build linux

package uring

import (
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// bufEntry is struct io_uring_buf; the ring's tail is the resv field of
// its first entry.
type bufEntry struct {
	addr uint64
	len  uint32
	bid  uint16
	resv uint16
}

// bufReg is struct io_uring_buf_reg.
type bufReg struct {
	ringAddr    uint64
	ringEntries uint32
	bgid        uint16
	flags       uint16
	resv        [3]uint64
}

// BufRing is a ring of provided buffers the kernel fills for receives of
// its group: a receive takes the next buffer, its completion names it,
// and the caller gives it back (Recycle, then Publish) once parsed.
type BufRing struct {
	r       *Ring
	group   uint16
	mem     []byte // the entries, then the buffers
	entries []bufEntry
	bufs    []byte
	size    int
	mask    uint16
	tail    uint16 // entries added, not yet published
	given   int    // buffers handed to the kernel so far (ids 0 to given-1)
}

// NewBufRing registers a ring of n buffers (a power of two, at most 32768)
// of size bytes each with r as group, and hands the kernel the first
// initial of them; Provide hands it more. The memory of a buffer never
// handed over is never touched, so it takes no resident memory.
func NewBufRing(r *Ring, group uint16, n, size, initial int) (*BufRing, error) {
	if n <= 0 || n > 1<<15 || n&(n-1) != 0 {
		return nil, fmt.Errorf("uring: %d buffers: want a power of two up to 32768", n)
	}
	ringBytes := n * int(unsafe.Sizeof(bufEntry{}))
	page := os.Getpagesize()
	ringBytes = (ringBytes + page - 1) / page * page
	mem, err := unix.Mmap(-1, 0, ringBytes+n*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANONYMOUS|unix.MAP_PRIVATE)
	if err != nil {
		return nil, os.NewSyscallError("mmap", err)
	}
	b := &BufRing{r: r, group: group, mem: mem, size: size, mask: uint16(n - 1),
		entries: unsafe.Slice((*bufEntry)(unsafe.Pointer(&mem[0])), n), bufs: mem[ringBytes:]}
	reg := bufReg{ringAddr: uint64(uintptr(unsafe.Pointer(&mem[0]))), ringEntries: uint32(n), bgid: group}
	if _, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerPbufRing, uintptr(unsafe.Pointer(&reg)), 1, 0, 0); errno != 0 {
		unix.Munmap(mem)
		return nil, os.NewSyscallError("io_uring_register", errno)
	}
	b.Provide(initial)
	return b, nil
}

// Provide hands the kernel k more of the ring's buffers (fewer where fewer
// are left) and publishes them; it reports how many it handed over.
func (b *BufRing) Provide(k int) int {
	k = min(k, len(b.entries)-b.given)
	for i := 0; i < k; i++ {
		b.Recycle(uint16(b.given))
		b.given++
	}
	b.Publish()
	return k
}

// Given is how many buffers the kernel was handed (ids 0 to Given-1).
func (b *BufRing) Given() int { return b.given }

// Group is the buffer group a receive names.
func (b *BufRing) Group() uint16 { return b.group }

// Buf is buffer id's memory.
func (b *BufRing) Buf(id uint16) []byte {
	off := int(id) * b.size
	return b.bufs[off : off+b.size : off+b.size]
}

// Recycle gives buffer id back to the kernel at the next Publish.
func (b *BufRing) Recycle(id uint16) {
	e := &b.entries[b.tail&b.mask]
	e.addr = uint64(uintptr(unsafe.Pointer(&b.bufs[int(id)*b.size])))
	e.len = uint32(b.size)
	e.bid = id
	b.tail++
}

// Publish makes the recycled buffers the kernel's.
func (b *BufRing) Publish() {
	// The tail is the high half of the 32-bit word that ends entry 0 (its
	// bid, then the tail), on a little-endian machine; the store
	// publishes every entry written before it.
	w := (*uint32)(unsafe.Pointer(&b.entries[0].bid))
	atomic.StoreUint32(w, tailWord(b.entries[0].bid, b.tail))
}

// Close unregisters the group and frees its memory.
func (b *BufRing) Close() error {
	reg := bufReg{bgid: b.group}
	_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(b.r.fd), unregisterPbufRing, uintptr(unsafe.Pointer(&reg)), 1, 0, 0)
	unix.Munmap(b.mem)
	if errno != 0 {
		return os.NewSyscallError("io_uring_register", errno)
	}
	return nil
}
