package h1

const (
	// maxHeadBlock bounds one status line plus header block, or one trailer
	// block, in bytes.
	maxHeadBlock = 64 << 10
	// maxChunkExt bounds the chunk extension bytes of one chunk-size line.
	maxChunkExt = 64 << 10
	// maxCLDigits bounds the digits of a Content-Length value.
	maxCLDigits = 18
	// maxChunkDigits bounds the hex digits of a chunk-size.
	maxChunkDigits = 15
)

// state is the position of the parser in the response grammar.
type state uint8

const (
	// Head states: status line, header fields and trailer fields.
	sVersion   state = iota // matching "HTTP/1."
	sMinor                  // minor version digit
	sSP                     // SP after the version
	sCode                   // 3DIGIT status code
	sAfterCode              // SP, CR or LF after the code
	sReason                 // reason phrase
	sStatusLF               // LF after CR ending the status line
	sLineStart              // start of a field line or of the blank line
	sName                   // field name
	sValue                  // field value
	sValueLF                // LF after CR ending a field line
	sEndLF                  // LF after CR of the blank line
	sHeadEnd                // marker: every state below is a head state

	// Body states.
	sBodyCL       // Content-Length body
	sBodyEOF      // close-delimited body
	sChunkSize    // chunk-size hex digits
	sChunkSizeWS  // BWS after chunk-size
	sChunkExt     // chunk extensions
	sChunkSizeLF  // LF after CR ending a chunk-size line
	sChunkData    // chunk data
	sChunkDataEnd // CR or LF after chunk data
	sChunkDataLF  // LF after CR after chunk data
	sDone         // response complete
)

// Header field names the parser interprets, as bits.
const (
	hCL   = 1 << iota // Content-Length
	hTE               // Transfer-Encoding
	hConn             // Connection
)

var hdrNames = [3]string{"content-length", "transfer-encoding", "connection"}

// List tokens the parser recognizes in Transfer-Encoding and Connection.
const (
	wChunked = 1 << iota
	wClose
	wKeepAlive
)

var listWords = [3]string{"chunked", "close", "keep-alive"}

// block is the state of one status line plus header block. It is reset for
// every interim (1xx) response.
type block struct {
	status    int
	http10    bool
	bodyHdrs  bool // Content-Length and Transfer-Encoding matter
	connClose bool
	keepAlive bool
	haveCL    bool
	sawTE     bool
	teBad     bool
	teElems   int32
	cl        int64
}

// Parser parses one HTTP/1.1 response at a time from a byte stream
// (RFC 9112). It is an incremental state machine: input may be split at any
// byte boundary, only fixed-size state is kept and nothing is allocated.
// The zero Parser is ready to parse a response to a non-HEAD request.
type Parser struct {
	expect []byte
	check  bool

	head    bool
	started bool
	state   state
	trailer bool // head states are parsing trailer fields
	chunked bool
	eofBody bool // close-delimited body
	bodyBad bool
	err     error

	blk block

	idx    int32 // position in "HTTP/1." or in the status code
	headN  int32 // bytes of the current head or trailer block
	cand   uint8 // candidate hCL/hTE/hConn bits while reading a name
	hk     uint8 // interpreted header being read (0: none)
	foldOK bool  // an obs-fold line may continue the last field line
	nameN  int32 // bytes of the name read so far
	vst    uint8 // value sub-state: 0 before element, 1 in element, 2 after
	vfresh bool  // no byte of the current value was consumed yet
	vmask  uint8 // candidate list words of the current element
	vn     int32 // bytes (or digits) of the current element
	cur    int64 // Content-Length element being read
	nd     int32 // chunk-size digits read
	extN   int32 // chunk extension bytes read

	rem     int64 // body bytes left in the Content-Length body or chunk
	bodyLen int64

	sample  [SampleMax]byte // the first bytes of a body that failed the check
	sampleN int
}

// SampleMax bounds the bytes kept of a body that failed its check.
const SampleMax = 64

// SetExpectBody sets the exact body every response must have; with check
// false bodies are not checked. The setting persists across Reset. The slice
// is retained: the caller keeps it alive and unchanged.
func (p *Parser) SetExpectBody(b []byte, check bool) {
	p.expect = b
	p.check = check
}

// Reset begins a new response. head tells that the request was HEAD, so the
// response has no body whatever its headers say (RFC 9112 §6.3 item 1).
func (p *Parser) Reset(head bool) {
	// The sample's bytes stay: a completion hands them out until the
	// next Parse (Session.complete), and only a body that fails its
	// check writes them again.
	*p = Parser{expect: p.expect, check: p.check, head: head, sample: p.sample}
}

// Started reports whether any byte of the current response was consumed,
// including bytes of interim 1xx responses.
func (p *Parser) Started() bool { return p.started }

// Status returns the final status code; it is valid once the response is
// done.
func (p *Parser) Status() int { return p.blk.status }

// Close reports whether the connection ends after this response: the
// Connection header has the "close" option, the response is HTTP/1.0 without
// "keep-alive", or the body is close-delimited (RFC 9112 §9.3, §9.6).
func (p *Parser) Close() bool {
	b := &p.blk
	return b.connClose || (b.http10 && (!b.keepAlive || p.chunked)) || p.eofBody
}

// BodyOK reports whether the body equalled the expected body byte for byte.
// It is true when checking is off.
func (p *Parser) BodyOK() bool {
	return !p.check || (!p.bodyBad && p.bodyLen == int64(len(p.expect)))
}

// BodyLen returns the body bytes received, without chunk framing.
func (p *Parser) BodyLen() int64 { return p.bodyLen }

// EOF tells the parser that the peer closed the connection. It returns
// done=true when that completes a close-delimited body (RFC 9112 §6.3 item
// 8). If no byte of the current response was consumed it returns
// (false, nil); in the middle of any other response it returns
// (false, ErrTruncated).
func (p *Parser) EOF() (done bool, err error) {
	if p.err != nil {
		return false, p.err
	}
	switch p.state {
	case sDone:
		return true, nil
	case sBodyEOF:
		p.state = sDone
		return true, nil
	}
	if !p.started {
		return false, nil
	}
	p.err = ErrTruncated
	return false, ErrTruncated
}

// fail records err so that later calls report it again.
func (p *Parser) fail(err error) error {
	p.err = err
	return err
}

// Parse consumes bytes of the current response from b. It returns the bytes
// consumed and done=true when the response is complete; then n may be less
// than len(b) and the rest belongs to the next response, to be parsed after
// Reset. When done is false all of b was consumed. A non-nil err is a
// protocol fault (*Error) and is sticky until Reset.
func (p *Parser) Parse(b []byte) (n int, done bool, err error) {
	if p.err != nil {
		return 0, false, p.err
	}
	if p.state == sDone {
		return 0, true, nil
	}
	if len(b) > 0 {
		p.started = true
	}
	i := 0
	for i < len(b) {
		if p.state < sHeadEnd {
			k, err := p.parseHead(b[i:])
			i += k
			if err != nil {
				return i, false, p.fail(err)
			}
			if p.state == sDone {
				return i, true, nil
			}
			continue
		}
		switch p.state {
		case sBodyCL:
			seg := b[i:]
			if int64(len(seg)) > p.rem {
				seg = seg[:p.rem]
			}
			p.body(seg)
			i += len(seg)
			p.rem -= int64(len(seg))
			if p.rem == 0 {
				p.state = sDone
				return i, true, nil
			}
		case sBodyEOF:
			p.body(b[i:])
			i = len(b)
		case sChunkData:
			seg := b[i:]
			if int64(len(seg)) > p.rem {
				seg = seg[:p.rem]
			}
			p.body(seg)
			i += len(seg)
			p.rem -= int64(len(seg))
			if p.rem == 0 {
				p.state = sChunkDataEnd
			}
		default:
			if err := p.chunkByte(b[i]); err != nil {
				return i, false, p.fail(err)
			}
			i++
		}
	}
	return i, false, nil
}
