// Package exchange is the contract between brk's engine (sched) and a
// protocol's session (h1.Session, h2.Session): the interface a session implements, the
// completion it reports, and the request description (Request) that each
// protocol's encoder renders once. It holds only these types and the
// request's validation, so that protocol packages depend on it and not on
// the engine or on each other.
package exchange

import (
	"errors"
	"math"
)

// ErrClosedIdle is what Parse (or EOF) returns for a response that answers
// no request and announces the close: a server ending a connection that
// had nothing outstanding (an idle timeout's 408 Request Timeout, as
// haproxy sends). It is the server's farewell, not a protocol fault: the
// worker closes the connection gracefully, replaces it and fails no
// request for it.
var ErrClosedIdle = errors.New("the server closed an idle connection")

// Session is one connection's protocol as sched's worker drives it. The worker
// owns the socket, admission, deadlines and outcomes; the session owns the
// framing: it encodes the requests the worker admits, says how far the
// socket took them, and parses responses. The worker's ring is the one
// record of a request: a pipeline's responses answer its requests in the
// order they were queued, and a multiplexed session names the request
// each answers.
// A protocol package exports a type that satisfies this (h1.Session,
// h2.Session). Every run is a request mix of one target or more: a
// session holds one template per target, each encoded once.
//
// A request is identified by its token, given at Queue: the worker's ring
// position, increasing in admission order. Requests are written in the
// order they were queued; a multiplexed session's responses may complete
// in any order, and carry the token (a pipeline keeps none).
type Session interface {
	// Reset begins a new connection: nothing queued, nothing in flight.
	Reset()
	// Queue appends one admitted request of target i: the index of its
	// template among the session's (0 for a run without a request mix).
	// last marks a connection's final request (it asks the server to
	// close).
	Queue(token uint32, i int, last bool)
	// Output returns bytes to write: queued requests, and whatever the
	// protocol itself has to send (acknowledgements, window updates,
	// cancellations) even when no request is pending. nil when none.
	Output() []byte
	// Wrote consumes n bytes of Output and reports how many queued
	// requests they completed the writing of, the oldest first (a request
	// the session dropped unwritten, a cancelled stream, is not one). A
	// request is written when the server has it: HTTP/1.1 once all its
	// bytes are out; an HTTP/2 stream once its HEADERS are (its body
	// follows within the windows). more reports that Output may have more
	// bytes now; when it is false, Output would return nil until the next
	// Queue or Parse.
	Wrote(n int) (written int, more bool)
	// Parse consumes response bytes and appends one Completion per
	// finished response to done. An error is a protocol fault: the
	// connection cannot be trusted any more; ErrClosedIdle is the server's
	// farewell on an idle connection instead.
	Parse(b []byte, done []Completion) (n int, out []Completion, err error)
	// EOF tells the session the peer closed the connection: it appends a
	// completion that the close finishes (a close-delimited body); an
	// error is a response cut short, or ErrClosedIdle when the close
	// finished a response that answered no request.
	EOF(done []Completion) ([]Completion, error)
}

// Streams is what a multiplexed session (HTTP/2) adds to Session: its
// requests are streams, each cancelled, limited, left unprocessed and
// failed on its own. The worker asks once per connection owner whether
// its session is one. A session that is not is a pipeline (HTTP/1.1),
// whose answers are the same on every connection: an expired request
// retires the connection (it cannot be cancelled alone); admission is
// unlimited; a graceful end certifies no written request unprocessed
// (only idempotent ones are replayed); the connection carries requests
// once set up; only the server's close ends it; nothing is written before
// a close for a fault; an abrupt end is one incident, its first request a
// transport failure and the pipelined followers abandoned, where a
// multiplexed session's written requests fail one by one; and it keeps
// no protocol counts.
type Streams interface {
	Session
	// Cancel is called when request token missed its deadline. keep
	// reports that the session cancelled that request alone and the
	// connection carries on (its cancellation is in Output); false asks
	// the worker to retire the connection.
	Cancel(token uint32) (keep bool)
	// Unprocessed reports, after the connection ended gracefully, whether
	// the written request token was certainly not processed by the
	// server, so that it is replayed on a new connection whatever its
	// method (a stream above a GOAWAY's last id). Requests the server may
	// have processed are replayed only when the method is idempotent.
	Unprocessed(token uint32) bool
	// Farewell is what to write before a connection is closed for a
	// protocol fault (HTTP/2's GOAWAY with the error's code); nil for none.
	Farewell() []byte
	// State is the session's live state: one value for the session's
	// life, across its connections. The worker takes it once and reads
	// it after each call, never asking.
	State() *State
}

// State is a multiplexed session's live state. The session brings it up
// to date before each of its calls that changes it returns (Reset, Queue,
// Output, Parse, Cancel), so that the worker reads it instead of asking:
// it changes only on those events.
type State struct {
	// Ready means the connection may carry requests: for HTTP/2 once the
	// peer's SETTINGS arrived. The worker counts a setup established only
	// when it is, within the setup deadline.
	Ready bool
	// Capacity is how many unresolved requests the connection may carry
	// (the peer's stream limit). Admission never exceeds it. While the
	// connection is set up it is at least one: the first request is
	// admitted at the connect, so that a failed setup counts it (connect,
	// connect_timeout) whatever the protocol.
	Capacity int
	// Drained means the connection ends now, gracefully, though the
	// server did not close it: the peer asked to stop (HTTP/2 GOAWAY) or
	// the session ended it itself (its last request answered, its stream
	// ids exhausted), and nothing the peer may still answer is
	// outstanding. The worker writes what Output still holds, closes the
	// connection and replays what Unprocessed names. The worker reads it
	// after the reads and expiries that may end the connection.
	Drained bool
	// Counters are the session's protocol counts, cumulative over its
	// connections.
	Counters
}

// PipelineState is a pipeline's (HTTP/1.1) state, the constants
// Streams lists, for a worker that reads every session's state alike:
// ready once set up, admission unlimited, never ended by the session, no
// stream limit. A worker keeps a copy per connection owner.
var PipelineState = State{Ready: true, Capacity: math.MaxInt32, Counters: Counters{MaxStreams: -1, LowestMaxStreams: -1}}

// Counters are a session's protocol counts.
type Counters struct {
	Resets  uint64 // streams the client reset (RST_STREAM) after their deadline
	GoAways uint64 // GOAWAY frames received
	// MaxStreams is the peer's stream limit on the current connection, -1
	// while it has set none.
	MaxStreams int64
	// LowestMaxStreams is the lowest stream limit the peer set on any
	// connection since the worker last read it, -1 for none: a limit
	// lowered and raised again between two reads still counts. The worker
	// sets it to MaxStreams when it reads it at a phase's end, so that the
	// limit still in force counts in the next phase.
	LowestMaxStreams int64
}

// Completion is one finished response: its outcome, and for a
// multiplexed session the request it answers.
type Completion struct {
	// Token is the request a multiplexed session's response answers. A
	// pipeline's answers its oldest unanswered request, which the worker
	// knows: it reads no token there.
	Token  uint32
	Status int
	BodyOK bool // the body met the expectation (or none was set)
	// Closing means the connection ends after this response: the server
	// asked to close, or the response ended with the connection.
	Closing bool
	// Sample, when the body failed its check, is its first bytes
	// (bounded), valid until the next Parse or EOF.
	Sample []byte
	// Reset means the server reset this request alone (an HTTP/2
	// RST_STREAM other than REFUSED_STREAM): no response, a transport
	// failure of this request.
	Reset bool
}
