//go:build linux

package uring

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel ABI (include/uapi/linux/io_uring.h) this package uses.
const (
	setupSubmitAll    = 1 << 7
	setupCQSize       = 1 << 3
	setupSingleIssuer = 1 << 12
	setupDeferTaskrun = 1 << 13

	featSingleMmap = 1 << 0
	featNoDrop     = 1 << 1
	featExtArg     = 1 << 8

	enterGetEvents = 1 << 0
	enterExtArg    = 1 << 3

	offSQRing = 0
	offSQEs   = 0x10000000

	registerProbe      = 8
	registerPbufRing   = 22
	pbufRingInc        = 1 << 1 // IOU_PBUF_RING_INC
	unregisterPbufRing = 23

	// Opcodes.
	OpPollAdd = 6
	OpCancel  = 14
	OpSend    = 26
	OpRecv    = 27
	// OpReadMultishot is a multishot read into provided buffers (Linux
	// 6.7): on a socket it is a multishot receive whose kernel state is
	// smaller (a 256-byte slab object, where a receive's is 512).
	OpReadMultishot = 49

	// SQE flags.
	sqeBufferSelect = 1 << 5

	// Receive flags (the SQE's ioprio).
	recvMultishot = 1 << 1

	// Poll flags (the SQE's len).
	pollAddMulti = 1 << 0

	// CQE flags.
	CQEBuffer    = 1 << 0 // the completion carries a provided buffer's id
	CQEMore      = 1 << 1 // a multishot request stays armed
	CQEBufMore   = 1 << 4 // the kernel goes on filling the buffer (incremental)
	cqeBufferSft = 16
)

// params is struct io_uring_params.
type params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  struct{ head, tail, ringMask, ringEntries, flags, dropped, array, resv1, userAddrLo, userAddrHi uint32 }
	cqOff                                                                  struct{ head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1, userAddrLo, userAddrHi uint32 }
}

// SQE is struct io_uring_sqe (64 bytes).
type SQE struct {
	Opcode      uint8
	Flags       uint8
	Ioprio      uint16
	Fd          int32
	Off         uint64
	Addr        uint64
	Len         uint32
	OpFlags     uint32
	UserData    uint64
	BufGroup    uint16
	Personality uint16
	FileIndex   uint32
	Addr3       uint64
	_           uint64
}

// CQE is struct io_uring_cqe (16 bytes).
type CQE struct {
	UserData uint64
	Res      int32
	Flags    uint32
}

// BufferID is the provided buffer a completion with CQEBuffer filled.
func (c *CQE) BufferID() uint16 { return uint16(c.Flags >> cqeBufferSft) }

// getEventsArg is struct io_uring_getevents_arg.
type getEventsArg struct {
	sigmask   uint64
	sigmaskSz uint32
	minWait   uint32
	ts        uint64
}

// Ring is one io_uring, used by the thread that created it only.
type Ring struct {
	fd      int
	ringMem []byte
	sqeMem  []byte

	sqHead *uint32 // the kernel's
	sqTail *uint32 // ours
	sqMask uint32
	sqLen  uint32
	sqes   []SQE
	tail   uint32 // SQEs handed out, not yet published

	cqHead *uint32 // ours
	cqTail *uint32 // the kernel's
	cqMask uint32
	cqes   []CQE

	arg getEventsArg
	ts  unix.Timespec
}

// New sets up a ring of entries submission slots and cqEntries completion
// slots (powers of two, cqEntries at least entries), for the calling
// thread alone.
func New(entries, cqEntries uint32) (*Ring, error) {
	p := params{flags: setupSingleIssuer | setupDeferTaskrun | setupSubmitAll | setupCQSize, cqEntries: cqEntries}
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil, os.NewSyscallError("io_uring_setup", errno)
	}
	r := &Ring{fd: int(fd)}
	if err := r.mmap(&p); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *Ring) mmap(p *params) error {
	const need = featSingleMmap | featNoDrop | featExtArg
	if p.features&need != need {
		return fmt.Errorf("io_uring: the kernel lacks a feature brk needs (features %#x, want %#x)", p.features, need)
	}
	size := max(p.sqOff.array+p.sqEntries*4, p.cqOff.cqes+p.cqEntries*uint32(unsafe.Sizeof(CQE{})))
	mem, err := unix.Mmap(r.fd, offSQRing, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return os.NewSyscallError("mmap", err)
	}
	r.ringMem = mem
	sqes, err := unix.Mmap(r.fd, offSQEs, int(p.sqEntries)*int(unsafe.Sizeof(SQE{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return os.NewSyscallError("mmap", err)
	}
	r.sqeMem = sqes
	u32 := func(off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&mem[off])) }
	r.sqHead, r.sqTail = u32(p.sqOff.head), u32(p.sqOff.tail)
	r.sqMask, r.sqLen = *u32(p.sqOff.ringMask), *u32(p.sqOff.ringEntries)
	r.sqes = unsafe.Slice((*SQE)(unsafe.Pointer(&sqes[0])), p.sqEntries)
	// The indirection array maps ring slot i to SQE i, once.
	array := unsafe.Slice(u32(p.sqOff.array), p.sqEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.tail = *r.sqTail
	r.cqHead, r.cqTail = u32(p.cqOff.head), u32(p.cqOff.tail)
	r.cqMask = *u32(p.cqOff.ringMask)
	r.cqes = unsafe.Slice((*CQE)(unsafe.Pointer(&mem[p.cqOff.cqes])), p.cqEntries)
	return nil
}

// Close releases the ring. Requests still in flight are cancelled by the
// kernel.
func (r *Ring) Close() error {
	if r.sqeMem != nil {
		unix.Munmap(r.sqeMem)
	}
	if r.ringMem != nil {
		unix.Munmap(r.ringMem)
	}
	return os.NewSyscallError("close", unix.Close(r.fd))
}

// SQE returns the next free submission entry, zeroed, or nil when the
// submission queue is full (Submit, then ask again).
func (r *Ring) SQE() *SQE {
	if r.tail-atomic.LoadUint32(r.sqHead) >= r.sqLen {
		return nil
	}
	s := &r.sqes[r.tail&r.sqMask]
	*s = SQE{}
	r.tail++
	return s
}

// Pending is how many entries wait to be submitted.
func (r *Ring) Pending() uint32 { return r.tail - atomic.LoadUint32(r.sqHead) }

// Submit hands the kernel what SQE gave out and returns at once.
func (r *Ring) Submit() error { return r.Enter(0, -1) }

// Enter submits what SQE gave out and, with wait > 0, waits until that
// many completions are ready or timeoutNs passed (-1: no limit). A
// timeout or a signal is not an error. The ring runs its deferred work
// here: a completion is only seen after an Enter.
func (r *Ring) Enter(wait uint32, timeoutNs int64) error {
	// Every entry the kernel has not taken, not only those given out since
	// the last Enter: one that refused them (EBUSY) takes them now.
	submit := r.tail - atomic.LoadUint32(r.sqHead)
	atomic.StoreUint32(r.sqTail, r.tail)
	flags := uintptr(enterGetEvents)
	var arg, argSz uintptr
	if wait > 0 && timeoutNs >= 0 {
		r.ts = unix.NsecToTimespec(timeoutNs)
		r.arg = getEventsArg{ts: uint64(uintptr(unsafe.Pointer(&r.ts)))}
		flags |= enterExtArg
		arg, argSz = uintptr(unsafe.Pointer(&r.arg)), unsafe.Sizeof(r.arg)
	}
	_, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(submit), uintptr(wait), flags, arg, argSz)
	switch errno {
	case 0, unix.ETIME, unix.EINTR:
		return nil
	case unix.EAGAIN, unix.EBUSY:
		// The completion queue is full (the kernel keeps the overflow,
		// FEAT_NODROP): the caller reaps, then submits again.
		return nil
	}
	return os.NewSyscallError("io_uring_enter", errno)
}

// Peek returns the oldest completion not yet consumed, or nil.
func (r *Ring) Peek() *CQE {
	head := *r.cqHead
	if head == atomic.LoadUint32(r.cqTail) {
		return nil
	}
	return &r.cqes[head&r.cqMask]
}

// Consume releases the completion Peek returned.
func (r *Ring) Consume() { atomic.StoreUint32(r.cqHead, *r.cqHead+1) }

// PrepRecvMultishot makes s a multishot receive on fd into buffers of
// group: one completion per chunk received, until it ends (a completion
// without CQEMore: the peer's end, an error, or the group ran out of
// buffers, -ENOBUFS).
func PrepRecvMultishot(s *SQE, fd int, group uint16, userData uint64) {
	s.Opcode, s.Fd, s.Ioprio, s.Flags, s.BufGroup, s.UserData = OpRecv, int32(fd), recvMultishot, sqeBufferSelect, group, userData
}

// PrepReadMultishot is PrepRecvMultishot with a multishot read (where
// Supports(OpReadMultishot)): the same completions, less kernel memory
// per connection.
func PrepReadMultishot(s *SQE, fd int, group uint16, userData uint64) {
	s.Opcode, s.Fd, s.Flags, s.BufGroup, s.UserData = OpReadMultishot, int32(fd), sqeBufferSelect, group, userData
	s.Off = ^uint64(0) // the file's position: a socket has none
}

// Supports reports whether the kernel knows opcode op (IORING_REGISTER_PROBE).
func (r *Ring) Supports(op uint8) bool {
	var probe struct {
		lastOp, opsLen uint8
		_              uint16
		_              [3]uint32
		ops            [256]struct {
			op    uint8
			_     uint8
			flags uint16
			_     uint32
		}
	}
	const opSupported = 1
	_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerProbe, uintptr(unsafe.Pointer(&probe)), uintptr(len(probe.ops)), 0, 0)
	return errno == 0 && op <= probe.lastOp && int(op) < int(probe.opsLen) && probe.ops[op].flags&opSupported != 0
}

// PrepSend makes s a send of b on fd (MSG_NOSIGNAL). b must stay as it is
// until the completion.
func PrepSend(s *SQE, fd int, b []byte, userData uint64) {
	s.Opcode, s.Fd, s.Addr, s.Len, s.OpFlags, s.UserData = OpSend, int32(fd), uint64(uintptr(unsafe.Pointer(&b[0]))), uint32(len(b)), unix.MSG_NOSIGNAL, userData
}

// PrepPoll makes s a poll for events on fd: once, or, multi, until
// cancelled.
func PrepPoll(s *SQE, fd int, events uint32, multi bool, userData uint64) {
	s.Opcode, s.Fd, s.OpFlags, s.UserData = OpPollAdd, int32(fd), events, userData
	if multi {
		s.Len = pollAddMulti
	}
}

// PrepCancel makes s cancel the request whose user data is target; it
// ends with -ECANCELED (or its own result, if it was completing). The
// kernel finds it by a hash of its user data, where a cancel by
// descriptor walks every pending request of the ring.
func PrepCancel(s *SQE, target, userData uint64) {
	s.Opcode, s.Fd, s.Addr, s.UserData = OpCancel, -1, target, userData
}

var (
	probeOnce sync.Once
	probeErr  error
)

// Available reports whether this kernel sets up the ring brk needs
// (Linux 6.1 or later, io_uring not disabled by sysctl or seccomp) and a
// provided-buffer ring on it; nil when it does.
func Available() error {
	probeOnce.Do(func() {
		// A ring has one issuer, the thread that set it up.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		r, err := New(8, 32)
		if err != nil {
			probeErr = err
			return
		}
		defer r.Close()
		b, err := NewBufRing(r, 0, 8, 64, 8)
		if err != nil {
			probeErr = err
			return
		}
		probeErr = b.Close()
	})
	return probeErr
}
