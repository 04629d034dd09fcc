//go:build linux

package poller

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/brk-bench/brk/internal/conn"
	"github.com/brk-bench/brk/internal/uring"
)

// The io_uring backend. The engine keeps its readiness loop: Wait still
// reports events per descriptor, and a connection's transport still reads
// until it would block and writes until its output is taken. What moves
// the bytes differs:
//
//   - Reads: one multishot receive per connection (a multishot read where
//     the kernel has it, Linux 6.7) into the worker's ring of provided
//     buffers; Wait turns each completion into a chunk queued
//     on the connection and a readable event, and the connection's Read
//     copies the queued chunks out, giving each buffer back as it empties.
//     No read system call.
//   - Writes: Write queues the bytes on the connection; every connection's
//     queued bytes of one loop turn go out as one send each, submitted
//     together with the wait (one io_uring_enter per turn). A write is
//     blocked (Write answers unix.EAGAIN) when a connection has more than
//     sendLimit bytes the kernel has not taken yet: the socket's buffer is
//     full. Its send's completion then raises a writable event.
//   - Connects: a one-shot poll for POLLOUT, whose completion is the
//     writable event the readiness loop waits for.
//
// Completions carry a connection's generation: those of a connection that
// was closed (Forget) are dropped, their buffers given back.

// sendLimit is what a connection may queue before a write is blocked.
const sendLimit = 256 << 10

// The provided buffers: at most bufCount of bufSize bytes each per worker,
// bufInitial handed to the kernel at first, twice as many each time a
// receive finds none left. A buffer's memory is first touched when the
// kernel fills it. What they hold is what the kernel received and the
// worker has not read yet, which epoll leaves in the sockets. Where the
// kernel fills a buffer in pieces (Linux 6.12), receives share buffers:
// at 15,000 connections of 150-byte responses 128 buffers (512 KiB) held
// them, where one receive per buffer took all 1,024 (4 MiB); 256 of those
// lost 60 % of the throughput (a receive that finds none ends, the bytes
// wait in the socket, and it is armed again; docs/measured.md). A chunk
// is at most bufSize bytes, so its place fits rxChunk's 16 bits.
const (
	bufCount   = 1024
	bufInitial = 16
	bufSize    = 4096
)

// A chunk's offset and length must fit rxChunk's 16 bits.
const _ uint16 = bufSize

// Send state: a connection holds a txState only while it has bytes queued
// or in flight, taken from and given back to its poller's spares (so there
// are as many as connections sending at once, not as connections). A
// buffer that grew past spareMax (a large body) goes to the collector.
const (
	spareCap = 256
	spareMax = 1 << 20
)

// The ring's queues: sqEntries submissions (a turn that queues more
// submits them as the queue fills), cqEntries completions (at 15,000
// connections a turn completes about one receive and one send each; the
// kernel keeps an overflow, FEAT_NODROP). Both are mapped and touched at
// set-up, per worker: 4,096 submissions took 256 KiB.
const (
	sqEntries = 1024
	cqEntries = 16384
)

// Connections' state is kept in blocks of connBlock, by descriptor: no
// allocation per connection, and no pointer per descriptor.
const connBlock = 64

// Completion kinds, in a completion's user data (kind<<56 | gen<<32 | fd).
const (
	kindRecv = iota + 1
	kindSend
	kindPoll
	kindWake
	kindCancel
)

func userData(kind int, gen uint32, fd int) uint64 {
	return uint64(kind)<<56 | uint64(gen&0xffffff)<<32 | uint64(uint32(fd))
}

// ringPoller is the io_uring state of a Poller.
type ringPoller struct {
	r    *uring.Ring
	bufs *uring.BufRing
	// recv arms a connection's multishot receive: a multishot read where
	// the kernel has it (its kernel state is half a receive's: 0.24 KB a
	// connection less, docs/measured.md).
	recv    func(s *uring.SQE, fd int, group uint16, userData uint64)
	wakefd  int
	conns   []*[connBlock]ringConn // by descriptor: conns[fd/connBlock][fd%connBlock]
	touched []*ringConn            // connections with events this turn
	sends   []*ringConn            // connections with bytes to send this turn
	rearm   []*ringConn            // receives to arm again (out of buffers)
	limbo   map[uint64]*txState    // sends in flight of closed connections
	txFree  []*txState             // send states not in use
	rxFree  []*rxQueue             // receive queues not in use
}

// txState is a connection's bytes to send: out queued for the next send,
// fly the send in flight, of which the kernel took flyOff bytes. The two
// buffers swap when a send completes.
type txState struct {
	out, fly []byte
	flyOff   int
}

// rxQueue is a connection's received chunks not yet read through, in
// order.
type rxQueue struct {
	chunks []rxChunk
	head   int32 // the first chunk not read through
	off    int32 // bytes of chunks[head] already read
	held   bool  // chunks[head-1] is out, in place (Chunk)
}

// rxChunk is one receive's bytes: n bytes at off in provided buffer id.
type rxChunk struct{ id, off, n uint16 }

// bytes is the chunk's bytes in its buffer.
func (x rxChunk) bytes(b *uring.BufRing) []byte {
	return b.Buf(x.id)[x.off : x.off+x.n]
}

// ringConn is one descriptor's state on the ring. It is the Raw of a TLS
// connection's transport (conn.Raw), and a plain connection's transport
// itself (ringTransport). It is kept to 48 bytes: a worker holds one per
// descriptor (15,000 connections on a worker is a case measured in
// docs/measured.md), and a connection holds its receive queue and send
// state, taken from the poller's spares, only while it has bytes in them.
type ringConn struct {
	p    *ringPoller
	rx   *rxQueue // received chunks not read through (nil when none)
	tx   *txState // bytes queued or in flight (nil when none)
	fd   int32
	gen  uint32
	rerr uint16 // a receive's errno, after rx
	werr uint16 // a send's errno
	// The event to report this turn (with listed).
	readable, writable, hup bool
	open                    bool // a connection is on this descriptor
	eof                     bool // the peer's end is queued after rx
	armed                   bool // a receive is in flight
	poll                    bool // the connect's poll is in flight
	waitW                   bool // a write was blocked: raise writable when the send completes
	queued                  bool // in sends
	listed                  bool // in touched
}

// NewUring creates a poller whose connections move their bytes through an
// io_uring (the calling thread is its only issuer: call it from the
// worker's locked thread).
func NewUring() (*Poller, error) {
	if err := uring.Available(); err != nil {
		return nil, err
	}
	r, err := uring.New(sqEntries, cqEntries)
	if err != nil {
		return nil, err
	}
	bufs, err := uring.NewBufRing(r, 0, bufCount, bufSize, bufInitial)
	if err != nil {
		r.Close()
		return nil, err
	}
	wfd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		bufs.Close()
		r.Close()
		return nil, os.NewSyscallError("eventfd", err)
	}
	rp := &ringPoller{r: r, bufs: bufs, wakefd: wfd, limbo: map[uint64]*txState{}, recv: uring.PrepRecvMultishot}
	if r.Supports(uring.OpReadMultishot) {
		rp.recv = uring.PrepReadMultishot
	}
	uring.PrepPoll(rp.sqe(), wfd, unix.POLLIN, true, userData(kindWake, 0, wfd))
	return &Poller{epfd: -1, wakefd: -1, ring: rp}, nil
}

// sqe returns a submission entry, submitting what is queued when the
// queue is full.
func (rp *ringPoller) sqe() *uring.SQE {
	for {
		if s := rp.r.SQE(); s != nil {
			return s
		}
		rp.r.Submit()
	}
}

// conn returns fd's state, made on first use.
func (rp *ringPoller) conn(fd int) *ringConn {
	i := fd / connBlock
	for i >= len(rp.conns) {
		rp.conns = append(rp.conns, make([]*[connBlock]ringConn, len(rp.conns)+1)...)
	}
	b := rp.conns[i]
	if b == nil {
		b = new([connBlock]ringConn)
		for k := range b {
			b[k].p, b[k].fd = rp, int32(i*connBlock+k)
		}
		rp.conns[i] = b
	}
	return &b[fd%connBlock]
}

// lookup returns fd's state, nil when fd never had a connection.
func (rp *ringPoller) lookup(fd int) *ringConn {
	if i := fd / connBlock; fd >= 0 && i < len(rp.conns) && rp.conns[i] != nil {
		return &rp.conns[i][fd%connBlock]
	}
	return nil
}

// add starts a connection on fd: its connect's completion is a writable
// event.
func (rp *ringPoller) add(fd int) error {
	c := rp.conn(fd)
	c.reset()
	c.open, c.poll = true, true
	uring.PrepPoll(rp.sqe(), fd, unix.POLLOUT|unix.POLLERR|unix.POLLHUP, false, userData(kindPoll, c.gen, fd))
	return nil
}

// reset readies c for a new connection on its descriptor.
func (c *ringConn) reset() {
	c.gen++
	if q := c.rx; q != nil {
		if q.held {
			q.head--
		}
		for _, x := range q.chunks[q.head:] {
			c.p.bufs.Release(x.id)
		}
		c.p.putRx(q)
		c.rx = nil
	}
	if t := c.tx; t != nil {
		c.tx = nil
		if len(t.fly) > 0 {
			// The kernel may still read it: keep it alive until its
			// completion.
			c.p.limbo[userData(kindSend, c.gen-1, int(c.fd))] = t
		} else {
			c.p.putTx(t)
		}
	}
	// An event still to be reported was the connection's before.
	c.readable, c.writable, c.hup = false, false, false
	c.eof, c.rerr, c.armed, c.poll, c.werr, c.waitW = false, 0, false, false, 0, false
}

// getTx returns an empty send state.
func (rp *ringPoller) getTx() *txState {
	if n := len(rp.txFree); n > 0 {
		t := rp.txFree[n-1]
		rp.txFree = rp.txFree[:n-1]
		return t
	}
	return &txState{out: make([]byte, 0, spareCap)}
}

// putTx takes back a send state the kernel is done with.
func (rp *ringPoller) putTx(t *txState) {
	t.out, t.fly, t.flyOff = spare(t.out), spare(t.fly), 0
	rp.txFree = append(rp.txFree, t)
}

// spare returns b emptied for reuse, or nil when it grew past spareMax.
func spare(b []byte) []byte {
	if cap(b) > spareMax {
		return nil
	}
	return b[:0]
}

// getRx returns an empty receive queue.
func (rp *ringPoller) getRx() *rxQueue {
	if n := len(rp.rxFree); n > 0 {
		q := rp.rxFree[n-1]
		rp.rxFree = rp.rxFree[:n-1]
		return q
	}
	return &rxQueue{chunks: make([]rxChunk, 0, 4)}
}

// putRx takes back a receive queue whose buffers were given back.
func (rp *ringPoller) putRx(q *rxQueue) {
	q.chunks, q.head, q.off, q.held = q.chunks[:0], 0, 0, false
	rp.rxFree = append(rp.rxFree, q)
}

// raw arms fd's receive and returns its Raw.
func (rp *ringPoller) raw(fd int) *ringConn {
	c := rp.conn(fd)
	if !c.armed {
		c.armed = true
		rp.recv(rp.sqe(), fd, rp.bufs.Group(), userData(kindRecv, c.gen, fd))
	}
	return c
}

// ringTransport is a ringConn as a plain connection's transport
// (conn.Transport): what conn.Plain is to a socket, with the ring's queues
// in place of system calls. It keeps no state of its own, buffers nothing
// the loop must flush (the poller sends what Write took at the end of the
// turn), and hands received bytes out in place (conn.Chunker).
type ringTransport ringConn

// transport arms fd's receive and returns its transport.
func (rp *ringPoller) transport(fd int) *ringTransport { return (*ringTransport)(rp.raw(fd)) }

// Traits implements conn.Transport.
func (t *ringTransport) Traits() conn.Traits { return conn.Traits{InPlace: true} }

// Arm implements conn.Transport: the ring reports the peer's end after the
// bytes before it, so there is nothing to keep.
func (t *ringTransport) Arm(hup bool) {}

// Read implements conn.Transport: with the bytes, conn.ErrWouldBlock when
// they were all that was received (the connection is drained).
func (t *ringTransport) Read(b []byte) (int, error) {
	c := (*ringConn)(t)
	n, err := c.Read(b)
	if n > 0 && c.rx == nil && c.rerr == 0 && !c.eof {
		return n, conn.ErrWouldBlock
	}
	return n, wouldBlock(err)
}

// Chunk implements conn.Chunker: Read without the copy.
func (t *ringTransport) Chunk() ([]byte, error) {
	b, err := (*ringConn)(t).Chunk()
	return b, wouldBlock(err)
}

// Write implements conn.Transport.
func (t *ringTransport) Write(b []byte) (int, error) {
	n, err := (*ringConn)(t).Write(b)
	return n, wouldBlock(err)
}

// Flush implements conn.Transport: nothing is left for the loop to flush.
func (t *ringTransport) Flush() (bool, error) { return false, nil }

// wouldBlock is err with unix.EAGAIN as a transport says it.
func wouldBlock(err error) error {
	if err == unix.EAGAIN {
		return conn.ErrWouldBlock
	}
	return err
}

// forget ends what the ring does on fd before the descriptor is closed.
func (rp *ringPoller) forget(fd int) {
	c := rp.lookup(fd)
	if c == nil || !c.open {
		return
	}
	c.open = false
	if t := c.tx; t != nil && len(t.out) > 0 && len(t.fly) == 0 && c.werr == 0 {
		// What Write took goes out before the close, as it would have on
		// epoll, where a write is in the socket when it returns: an
		// HTTP/2 GOAWAY before a reset, a request the engine counted as
		// written. Best effort, like a nonblocking write: a full socket
		// keeps the rest. Behind a send still in flight it would overtake
		// it, so there it is dropped.
		unix.Write(fd, t.out)
	}
	// Each request in flight is cancelled by its user data (a request
	// holds the socket open), submitted at once, so that the caller's
	// close closes it, as on epoll. A cancel by descriptor walked every
	// pending request of the ring: 15,000 connections took 3.4 s to close.
	for _, k := range [...]struct {
		on   bool
		kind int
	}{{c.armed, kindRecv}, {c.tx != nil && len(c.tx.fly) > 0, kindSend}, {c.poll, kindPoll}} {
		if k.on {
			uring.PrepCancel(rp.sqe(), userData(k.kind, c.gen, fd), userData(kindCancel, 0, fd))
		}
	}
	rp.r.Submit()
	c.reset()
}

// Read copies received bytes into b: unix.EAGAIN when none are queued,
// (0, nil) at the peer's end, the receive's error after the bytes before it.
func (c *ringConn) Read(b []byte) (int, error) {
	n := 0
	if q := c.release(); q != nil {
		for int(q.head) < len(q.chunks) && n < len(b) {
			x := q.chunks[q.head]
			k := copy(b[n:], x.bytes(c.p.bufs)[q.off:])
			n += k
			q.off += int32(k)
			if q.off == int32(x.n) {
				c.p.bufs.Release(x.id)
				q.head, q.off = q.head+1, 0
			}
		}
		if int(q.head) == len(q.chunks) {
			c.p.putRx(q)
			c.rx = nil
		}
	}
	return n, c.end(n)
}

// Chunk returns the next received chunk in the provided buffer it landed
// in, valid until the next Chunk or Read or the connection's close (the
// buffer goes back to the kernel then); the errors are Read's.
func (c *ringConn) Chunk() ([]byte, error) {
	if q := c.release(); q != nil {
		b := q.chunks[q.head].bytes(c.p.bufs)[q.off:]
		q.head, q.off, q.held = q.head+1, 0, true
		return b, nil
	}
	return nil, c.end(0)
}

// release gives back the chunk Chunk handed out, and returns the receive
// queue while it holds bytes to read (nil: none).
func (c *ringConn) release() *rxQueue {
	q := c.rx
	if q == nil {
		return nil
	}
	if q.held {
		q.held = false
		c.p.bufs.Release(q.chunks[q.head-1].id)
	}
	if int(q.head) == len(q.chunks) {
		c.p.putRx(q)
		c.rx = nil
		return nil
	}
	return q
}

// end is what a read of n bytes answers: nil after bytes, then the
// receive's error, (0, nil) at the peer's end, or unix.EAGAIN.
func (c *ringConn) end(n int) error {
	switch {
	case n > 0:
		return nil
	case c.rerr != 0:
		return unix.Errno(c.rerr)
	case c.eof:
		return nil
	}
	return unix.EAGAIN
}

// Write queues b to be sent at the end of the loop turn: unix.EAGAIN when
// the kernel has not taken sendLimit bytes already queued.
func (c *ringConn) Write(b []byte) (int, error) {
	if c.werr != 0 {
		return 0, unix.Errno(c.werr)
	}
	t := c.tx
	if t == nil {
		t = c.p.getTx()
		c.tx = t
	}
	if len(t.out)+len(t.fly)-t.flyOff >= sendLimit {
		c.waitW = true
		return 0, unix.EAGAIN
	}
	t.out = append(t.out, b...)
	if !c.queued && len(t.fly) == 0 {
		c.queued = true
		c.p.sends = append(c.p.sends, c)
	}
	return len(b), nil
}

// send submits c's queued bytes as one send.
func (rp *ringPoller) send(c *ringConn) {
	c.queued = false
	t := c.tx
	if !c.open || t == nil || len(t.fly) > 0 || c.werr != 0 || len(t.out) == 0 {
		return
	}
	t.fly, t.out, t.flyOff = t.out, t.fly[:0], 0
	uring.PrepSend(rp.sqe(), int(c.fd), t.fly, userData(kindSend, c.gen, int(c.fd)))
}

// mark records ev for c's event this turn.
func (rp *ringPoller) mark(c *ringConn, readable, writable, hup bool) {
	if !c.listed {
		c.listed = true
		c.readable, c.writable, c.hup = false, false, false
		rp.touched = append(rp.touched, c)
	}
	c.readable = c.readable || readable
	c.writable = c.writable || writable
	c.hup = c.hup || hup
}

// wait submits the turn's sends, receives and buffers, waits up to
// timeoutNs (-1: forever) for completions, and reports their events.
func (rp *ringPoller) wait(events []Event, timeoutNs int64) (int, error) {
	for _, c := range rp.sends {
		rp.send(c)
	}
	rp.sends = rp.sends[:0]
	for _, c := range rp.rearm {
		if c.open && !c.armed && c.rerr == 0 && !c.eof {
			c.armed = true
			rp.recv(rp.sqe(), int(c.fd), rp.bufs.Group(), userData(kindRecv, c.gen, int(c.fd)))
		}
	}
	rp.rearm = rp.rearm[:0]
	rp.bufs.Publish()
	var wait uint32 = 1
	if rp.r.Peek() != nil || len(rp.touched) > 0 || timeoutNs == 0 {
		wait = 0
	}
	if err := rp.r.Enter(wait, timeoutNs); err != nil {
		return 0, err
	}
	// Every completion is applied, whatever the room in events: a send's
	// completion gives its buffer back, and one left in the queue behind
	// a burst of receives or connects held a buffer per connection (15,000
	// at a 15,000-connection start). The events that do not fit are
	// reported by the next wait, which then does not block.
	for c := rp.r.Peek(); c != nil; c = rp.r.Peek() {
		rp.complete(c)
		rp.r.Consume()
	}
	i, n := 0, 0
	for ; i < len(rp.touched) && n < len(events); i++ {
		c := rp.touched[i]
		c.listed = false
		if c.readable || c.writable || c.hup { // not cleared by reset
			events[n] = Event{Fd: c.fd, Readable: c.readable, Writable: c.writable, Hup: c.hup}
			n++
		}
	}
	rp.touched = rp.touched[:copy(rp.touched, rp.touched[i:])]
	return n, nil
}

// complete applies one completion.
func (rp *ringPoller) complete(cqe *uring.CQE) {
	kind, gen, fd := int(cqe.UserData>>56), uint32(cqe.UserData>>32)&0xffffff, int(uint32(cqe.UserData))
	var c *ringConn
	if kind != kindWake && kind != kindCancel {
		c = rp.lookup(fd)
	}
	current := c != nil && c.open && c.gen&0xffffff == gen
	switch kind {
	case kindWake:
		var buf [8]byte
		unix.Read(rp.wakefd, buf[:])
		if cqe.Flags&uring.CQEMore == 0 {
			uring.PrepPoll(rp.sqe(), rp.wakefd, unix.POLLIN, true, userData(kindWake, 0, rp.wakefd))
		}
	case kindRecv:
		// The bytes' place in their buffer is recorded whether they are
		// kept or not: the next receive into it lands after them.
		var x rxChunk
		if cqe.Flags&uring.CQEBuffer != 0 {
			x.id, x.n = cqe.BufferID(), uint16(max(cqe.Res, 0))
			x.off = uint16(rp.bufs.Received(x.id, int(x.n), cqe.Flags&uring.CQEBufMore != 0))
			if !current || cqe.Res <= 0 {
				rp.bufs.Release(x.id)
			}
		}
		if !current {
			return
		}
		more := cqe.Flags&uring.CQEMore != 0
		switch res := cqe.Res; {
		case res > 0:
			if c.rx == nil {
				c.rx = rp.getRx()
			}
			c.rx.chunks = append(c.rx.chunks, x)
			rp.mark(c, true, false, false)
		case res == 0:
			c.eof = true
			rp.mark(c, true, false, true)
		case res == -int32(unix.ENOBUFS):
			// Out of buffers: armed again once this turn gave some back,
			// and more of them handed over while there are more.
			more = false
			rp.rearm = append(rp.rearm, c)
			rp.bufs.Provide(rp.bufs.Given())
		default:
			c.rerr = uint16(-res)
			rp.mark(c, true, false, true)
		}
		if !more {
			c.armed = false
			if cqe.Res > 0 {
				rp.rearm = append(rp.rearm, c)
			}
		}
	case kindSend:
		if !current {
			if t, ok := rp.limbo[cqe.UserData]; ok {
				delete(rp.limbo, cqe.UserData)
				rp.putTx(t)
			}
			return
		}
		t := c.tx
		if cqe.Res < 0 {
			c.werr = uint16(-cqe.Res)
			c.tx = nil
			rp.putTx(t)
			rp.mark(c, true, true, true)
			return
		}
		t.flyOff += int(cqe.Res)
		if t.flyOff < len(t.fly) {
			uring.PrepSend(rp.sqe(), fd, t.fly[t.flyOff:], userData(kindSend, c.gen, fd))
			return
		}
		// Done: what was queued behind it goes out, or the state goes back.
		if len(t.out) > 0 {
			t.fly, t.out, t.flyOff = t.out, t.fly[:0], 0
			uring.PrepSend(rp.sqe(), fd, t.fly, userData(kindSend, c.gen, fd))
		} else {
			c.tx = nil
			rp.putTx(t)
		}
		if c.waitW {
			c.waitW = false
			rp.mark(c, false, true, false)
		}
	case kindPoll:
		if !current {
			return
		}
		c.poll = false
		ev := uint32(cqe.Res)
		rp.mark(c, false, ev&unix.POLLOUT != 0 || cqe.Res < 0, ev&(unix.POLLERR|unix.POLLHUP) != 0 || cqe.Res < 0)
	}
}

// wake makes a concurrent or later wait return.
func (rp *ringPoller) wake() error {
	var one = [8]byte{1, 0, 0, 0, 0, 0, 0, 0}
	_, err := unix.Write(rp.wakefd, one[:])
	if err == unix.EAGAIN {
		return nil
	}
	return os.NewSyscallError("write", err)
}

func (rp *ringPoller) close() error {
	unix.Close(rp.wakefd)
	rp.bufs.Close()
	return rp.r.Close()
}
