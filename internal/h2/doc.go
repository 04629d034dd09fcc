// Package h2 is brk's HTTP/2 client (RFC 9113) for the load engine: it
// encodes a target's request once (Template) and drives one connection's
// streams, flow control and response parsing (Session) over byte slices,
// without I/O of its own and without allocating per request.
//
// # How it maps onto exchange.Session
//
// The engine (sched) owns the socket, admission, deadlines and outcomes;
// a Session owns the framing, as exchange.Session describes:
//
//   - Reset writes the connection preface (from the Template) as the first
//     output; Ready is true once the peer's SETTINGS arrived.
//   - Queue adds a request's token; Output opens queued requests as
//     streams (HEADERS) within the peer's stream limit, then appends their
//     bodies' DATA within the windows; Wrote reports a request written once
//     its HEADERS are out.
//   - Parse reads frames and reports a Completion per stream answered (or
//     reset by the server, Reset set). A protocol fault is an *Error; its
//     GOAWAY is Farewell.
//   - Cancel resets one stream (RST_STREAM CANCEL) and keeps the
//     connection; Capacity is the peer's stream limit; after a GOAWAY or a
//     refused stream, Drained and Unprocessed tell the engine when to close
//     and what to replay. These make it a exchange.Streams: its streams fail
//     one by one.
//
// # Files
//
// parser.go reads frames in place; writer.go appends HEADERS, DATA and
// control frames; streams.go holds the request queue, the stream table,
// resets and GOAWAY (what is replayed); flow.go the windows and the peer's
// SETTINGS; session.go the exchange.Session and exchange.Streams methods; template.go the request
// encoded once.
//
// # What comes from x/net/http2 and what is written by hand
//
// From golang.org/x/net/http2: the Framer writes the preface's SETTINGS
// and WINDOW_UPDATE (Template), and SETTINGS ACKs, PING ACKs,
// WINDOW_UPDATEs, RST_STREAMs and GOAWAYs into the session's output
// buffer; it reads the rare frames (SETTINGS, PING, GOAWAY, RST_STREAM,
// WINDOW_UPDATE, unknown types), each buffered whole first, since
// ReadFrame reads a whole frame and allocates most of them. From
// golang.org/x/net/http2/hpack: the Encoder renders the request's header
// block once (with a zero dynamic table, so that every request's block is
// the same bytes), and one Decoder per connection decodes the response
// header blocks, fed incrementally, also for reset streams (the table
// must stay in step).
//
// Written by hand, on the hot path: the client preface's magic; HEADERS
// and CONTINUATION frames (split at the peer's SETTINGS_MAX_FRAME_SIZE,
// which the Framer does not do) and DATA frames of request bodies; the
// GOAWAY of Farewell; and the parsing of DATA, HEADERS and CONTINUATION
// frames in place from the read bytes, at any split point. Flow control
// (both directions) and stream state are this package's own: the Framer
// does none.
package h2
