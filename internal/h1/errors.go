package h1

// Error is a protocol fault of the server. Reason is a static string
// suitable as a metrics label (for example "bad_status_line").
type Error struct{ Reason string }

// Error returns the reason prefixed with the package name.
func (e *Error) Error() string { return "h1: " + e.Reason }

// Sentinel errors returned by Parser.Parse and Parser.EOF. They are compared
// by identity.
var (
	// ErrBadStatusLine reports a status line that is not
	// "HTTP/1.x SP 3DIGIT [SP reason] CRLF" (RFC 9112 §4).
	ErrBadStatusLine = &Error{"bad_status_line"}
	// ErrHeaderTooLarge reports a header or trailer block over 64 KiB.
	ErrHeaderTooLarge = &Error{"header_too_large"}
	// ErrConflictingContentLength reports Content-Length values that differ
	// (RFC 9112 §6.3 item 5).
	ErrConflictingContentLength = &Error{"conflicting_content_length"}
	// ErrContentLengthWithTransferEncoding reports a response carrying both
	// Content-Length and Transfer-Encoding (RFC 9112 §6.3 item 3).
	ErrContentLengthWithTransferEncoding = &Error{"content_length_with_transfer_encoding"}
	// ErrBadContentLength reports a Content-Length value that is not 1*DIGIT
	// (at most 18 digits) or a list of such values (RFC 9110 §8.6).
	ErrBadContentLength = &Error{"bad_content_length"}
	// ErrBadChunkSize reports a malformed chunk-size line (RFC 9112 §7.1).
	ErrBadChunkSize = &Error{"bad_chunk_size"}
	// ErrBadChunk reports chunk data not followed by CRLF (RFC 9112 §7.1).
	ErrBadChunk = &Error{"bad_chunk"}
	// ErrUnsupportedTransferEncoding reports a transfer coding list other
	// than exactly "chunked" (RFC 9112 §6.1).
	ErrUnsupportedTransferEncoding = &Error{"unsupported_transfer_encoding"}
	// ErrBadHeader reports a malformed header or trailer field line
	// (RFC 9112 §5).
	ErrBadHeader = &Error{"bad_header"}
	// ErrObsFold reports obsolete line folding (RFC 9112 §5.2) that the
	// parser refuses: a fold line before any field line of a block, or one
	// continuing Content-Length, Transfer-Encoding or Connection. A fold
	// continuing any other field is accepted as SP.
	ErrObsFold = &Error{"obs_fold"}
	// ErrUnexpected101 reports a 101 Switching Protocols response, which brk
	// never asks for.
	ErrUnexpected101 = &Error{"unexpected_101"}
	// ErrTruncated reports that the peer closed the connection in the middle
	// of a response whose framing is not close-delimited (RFC 9112 §8). The
	// engine counts it as a transport failure, not a protocol fault.
	ErrTruncated = &Error{"truncated"}
)
