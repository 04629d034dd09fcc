// Package h1 encodes HTTP/1.1 requests and parses HTTP/1.1 responses for
// the brk load engine (RFC 9112).
//
// Requests are validated and rendered once (Encode) and the same
// bytes are written for every request. Responses are parsed by Parser, a
// byte-level incremental state machine that accepts input split at any byte
// boundary, keeps only fixed-size state and never allocates, so the engine
// can feed it whatever each socket read returned without buffering partial
// headers.//
// Files: request.go renders the request, session.go is the exchange.Session
// (Template, Session); parser.go holds the Parser and its entry points,
// head.go the status line and field lines (a function per state),
// values.go the interpreted field values (Content-Length,
// Transfer-Encoding, Connection), body.go the body and chunked framing.
package h1
