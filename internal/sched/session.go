package sched

import (
	"math"

	"github.com/brk-bench/brk/internal/exchange"
)

// Session is the protocol session the worker drives (package exchange holds
// the contract, so that protocol packages need not import the engine).
type Session = exchange.Session

// Streams is a multiplexed session (HTTP/2): what it adds to Session.
type Streams = exchange.Streams

// Completion is one finished response.
type Completion = exchange.Completion

// An owner asks once, when it makes its session, whether the session is
// multiplexed (o.streams), and takes its live state (o.live). These are
// the owner's questions that only a multiplexed session answers, read
// from that state or asked of the session; a pipeline's (HTTP/1.1)
// answers are the constants exchange.Streams lists, and its session is
// not asked.

// capacity is how many unresolved requests o's connection may carry now.
func (o *owner) capacity() int {
	if o.live == nil {
		return math.MaxInt32
	}
	return o.live.Capacity
}

// cancel reports that the session cancelled request tok alone and the
// connection carries on; false retires the connection.
func (o *owner) cancel(tok uint32) bool { return o.streams != nil && o.streams.Cancel(tok) }

// unprocessed reports that the written request tok was certainly not
// processed by the server after a graceful end.
func (o *owner) unprocessed(tok uint32) bool {
	return o.streams != nil && o.streams.Unprocessed(tok)
}

// ready reports that o's connection may carry requests.
func (o *owner) ready() bool { return o.live == nil || o.live.Ready }

// sessionDrained reports that the session ended o's connection though the
// server did not close it (a pipeline: only the server's close ends it).
func (o *owner) sessionDrained() bool { return o.live != nil && o.live.Drained }

// farewell is what to write before o's connection is closed for a
// protocol fault (nil: nothing).
func (o *owner) farewell() []byte {
	if o.streams == nil {
		return nil
	}
	return o.streams.Farewell()
}

// independent reports that o's written requests fail one by one when the
// connection ends abruptly, rather than as one incident.
func (o *owner) independent() bool { return o.streams != nil }

// counters are o's session's protocol counts (nil: it keeps none).
func (o *owner) counters() *exchange.Counters {
	if o.live == nil {
		return nil
	}
	return &o.live.Counters
}
