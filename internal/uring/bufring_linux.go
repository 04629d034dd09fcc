//go:build linux

package uring

import (
	"errors"
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
// its group. A receive's completion names the buffer its bytes landed in;
// the caller records it (Received, which says where in the buffer they
// are) and releases it once parsed (Release). A buffer goes back to the
// kernel, at the next Publish, when the kernel is done filling it and no
// receive holds it.
//
// Where the kernel allows (Linux 6.12, IOU_PBUF_RING_INC) a buffer is
// filled in pieces: a receive of 150 bytes takes 150 bytes of the buffer,
// and the next receive, on any connection, lands right after them. Small
// responses then share a buffer instead of taking one each.
type BufRing struct {
	r       *Ring
	group   uint16
	mem     []byte // the entries, then the buffers
	entries []bufEntry
	bufs    []byte
	size    int
	mask    uint16
	tail    uint16     // entries added
	shown   uint16     // entries published
	given   int        // buffers handed to the kernel so far (ids 0 to given-1)
	inc     bool       // the kernel fills a buffer in pieces
	state   []bufState // by buffer id
}

// bufState is what the ring knows of one buffer.
type bufState struct {
	filled uint16 // bytes the kernel put in it since it was handed over
	holds  uint16 // receives in it not released
	kernel bool   // the kernel may still fill it
}

// NewBufRing registers a ring of n buffers (a power of two, at most 32768)
// of size bytes (at most 65535) each with r as group, and hands the kernel
// the first initial of them; Provide hands it more. The memory of a buffer
// never handed over is never touched, so it takes no resident memory. The
// buffers are filled in pieces where the kernel can (Incremental).
func NewBufRing(r *Ring, group uint16, n, size, initial int) (*BufRing, error) {
	b, err := newBufRing(r, group, n, size, initial, pbufRingInc)
	if errors.Is(err, unix.EINVAL) {
		b, err = newBufRing(r, group, n, size, initial, 0) // before Linux 6.12
	}
	return b, err
}

// newBufRing is NewBufRing with the registration's flags.
func newBufRing(r *Ring, group uint16, n, size, initial int, flags uint16) (*BufRing, error) {
	if n <= 0 || n > 1<<15 || n&(n-1) != 0 {
		return nil, fmt.Errorf("uring: %d buffers: want a power of two up to 32768", n)
	}
	if size <= 0 || size > 1<<16-1 {
		return nil, fmt.Errorf("uring: buffers of %d bytes: want 1 to 65535", size)
	}
	ringBytes := n * int(unsafe.Sizeof(bufEntry{}))
	page := os.Getpagesize()
	ringBytes = (ringBytes + page - 1) / page * page
	mem, err := unix.Mmap(-1, 0, ringBytes+n*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANONYMOUS|unix.MAP_PRIVATE)
	if err != nil {
		return nil, os.NewSyscallError("mmap", err)
	}
	b := &BufRing{r: r, group: group, mem: mem, size: size, mask: uint16(n - 1),
		entries: unsafe.Slice((*bufEntry)(unsafe.Pointer(&mem[0])), n), bufs: mem[ringBytes:],
		inc: flags&pbufRingInc != 0, state: make([]bufState, n)}
	reg := bufReg{ringAddr: uint64(uintptr(unsafe.Pointer(&mem[0]))), ringEntries: uint32(n), bgid: group, flags: flags}
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
		b.recycle(uint16(b.given))
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

// Incremental reports whether the kernel fills a buffer in pieces.
func (b *BufRing) Incremental() bool { return b.inc }

// Received records a receive of n bytes into buffer id, whose completion
// said whether the kernel goes on filling the buffer (CQEBufMore), and
// returns where in the buffer the bytes are. Each Received is matched by
// one Release.
func (b *BufRing) Received(id uint16, n int, more bool) int {
	st := &b.state[id]
	off := int(st.filled)
	st.filled += uint16(n)
	st.holds++
	// Filled in pieces, the kernel keeps the buffer while it has room;
	// a receive that took no bytes left it as it was.
	st.kernel = b.inc && (more || n == 0)
	return off
}

// Release ends the hold of one receive on buffer id: the buffer goes back
// to the kernel at the next Publish when it was the last and the kernel
// is done filling it.
func (b *BufRing) Release(id uint16) {
	st := &b.state[id]
	st.holds--
	if st.holds == 0 && !st.kernel {
		b.recycle(id)
	}
}

// Held is how many receives are held (Received, not yet Released).
func (b *BufRing) Held() int {
	n := 0
	for _, st := range b.state {
		n += int(st.holds)
	}
	return n
}

// recycle hands buffer id to the kernel, whole, at the next Publish.
func (b *BufRing) recycle(id uint16) {
	e := &b.entries[b.tail&b.mask]
	e.addr = uint64(uintptr(unsafe.Pointer(&b.bufs[int(id)*b.size])))
	e.len = uint32(b.size)
	e.bid = id
	b.tail++
	b.state[id] = bufState{kernel: true}
}

// Publish makes the buffers given back the kernel's.
func (b *BufRing) Publish() {
	if b.shown == b.tail {
		return
	}
	b.shown = b.tail
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
