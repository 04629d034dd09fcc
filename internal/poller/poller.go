// Package poller is brk's readiness poller: epoll on Linux, kqueue on macOS
// and the BSDs, behind one small type.
//
// Sockets are registered once, edge-triggered, for both read and write
// readiness. A worker then never changes interest on the request path: it
// reads until EAGAIN, writes optimistically until EAGAIN, and waits for the
// next edge. Level-triggered registration would need an epoll_ctl call every
// time a connection's write path fills or empties (as wrk does per request);
// edge-triggered needs none. A socket leaves the poller when it is closed:
// there is no call to remove one.
//
// Event user data carries the file descriptor, never a Go pointer.
package poller

// Event is one readiness notification.
type Event struct {
	Fd       int32 // the registered descriptor
	Readable bool  // data (or EOF) can be read
	Writable bool  // the socket accepts writes (or a connect finished)
	Hup      bool  // the peer closed its side (FIN), reset, or the socket has an error
}
