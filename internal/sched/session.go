package sched

import "github.com/brk-bench/brk/internal/exchange"

// Session is the protocol session the worker drives (package exchange holds
// the contract, so that protocol packages need not import the engine).
type Session = exchange.Session

// Streams is a multiplexed session (HTTP/2): what it adds to Session.
type Streams = exchange.Streams

// Completion is one finished response.
type Completion = exchange.Completion

// An owner asks once, when it makes its session, whether the session is
// multiplexed (o.streams), and takes its live state (o.live): a
// multiplexed session's own, which it keeps current, or a copy of
// exchange.PipelineState, whose answers never change. The worker reads
// that state (ready, capacity, drained, counts) and never asks. These are
// the questions only a multiplexed session answers; a pipeline's answers
// are the constants exchange.Streams lists, and its session is not asked.

// cancel reports that the session cancelled request tok alone and the
// connection carries on; false retires the connection.
func (o *owner) cancel(tok uint32) bool { return o.streams != nil && o.streams.Cancel(tok) }

// unprocessed reports that the written request tok was certainly not
// processed by the server after a graceful end.
func (o *owner) unprocessed(tok uint32) bool {
	return o.streams != nil && o.streams.Unprocessed(tok)
}

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
