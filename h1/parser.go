package h1

import (
	"bytes"
	"encoding/binary"
)

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
	*p = Parser{expect: p.expect, check: p.check, head: head}
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

// body accounts for decoded body bytes and compares them with the expected
// body.
func (p *Parser) body(seg []byte) {
	if p.check {
		if !p.bodyBad {
			off := p.bodyLen
			if off+int64(len(seg)) > int64(len(p.expect)) || !bytes.Equal(p.expect[off:off+int64(len(seg))], seg) {
				// Every byte before this segment matched: the sample
				// starts with them.
				p.bodyBad = true
				p.sampleN = copy(p.sample[:], p.expect[:min(off, SampleMax)])
			}
		}
		if p.bodyBad && p.sampleN < SampleMax {
			p.sampleN += copy(p.sample[p.sampleN:], seg)
		}
	}
	p.bodyLen += int64(len(seg))
}

// Sample returns the first bytes (at most SampleMax) of a complete body
// that failed the check, nil otherwise. It is valid until Reset.
func (p *Parser) Sample() []byte {
	switch {
	case !p.check || p.BodyOK():
		return nil
	case !p.bodyBad: // a prefix of the expected body: too short
		return p.expect[:min(p.bodyLen, SampleMax)]
	}
	return p.sample[:p.sampleN]
}

// chunkByte advances the chunk framing states by one byte (RFC 9112 §7.1).
func (p *Parser) chunkByte(c byte) error {
	switch p.state {
	case sChunkSize:
		if v := unhex[c]; v != 0xff {
			if p.nd == maxChunkDigits {
				return ErrBadChunkSize
			}
			p.rem = p.rem<<4 | int64(v)
			p.nd++
			return nil
		}
		if p.nd == 0 {
			return ErrBadChunkSize
		}
		return p.afterSize(c)
	case sChunkSizeWS:
		return p.afterSize(c)
	case sChunkExt:
		switch {
		case c == '\r':
			p.state = sChunkSizeLF
		case c == '\n':
			p.sizeDone()
		case !vchar[c]:
			return ErrBadChunkSize
		default:
			p.extN++
			if p.extN > maxChunkExt {
				return ErrBadChunkSize
			}
		}
	case sChunkSizeLF:
		if c != '\n' {
			return ErrBadChunkSize
		}
		p.sizeDone()
	case sChunkDataEnd:
		switch c {
		case '\r':
			p.state = sChunkDataLF
		case '\n':
			p.state = sChunkSize
		default:
			return ErrBadChunk
		}
	case sChunkDataLF:
		if c != '\n' {
			return ErrBadChunk
		}
		p.state = sChunkSize
	}
	return nil
}

// afterSize handles a byte after the chunk-size digits: BWS, the start of a
// chunk extension or the line end.
func (p *Parser) afterSize(c byte) error {
	switch c {
	case ' ', '\t':
		p.state = sChunkSizeWS
	case ';':
		p.state = sChunkExt
		p.extN = 0
	case '\r':
		p.state = sChunkSizeLF
	case '\n':
		p.sizeDone()
	default:
		return ErrBadChunkSize
	}
	return nil
}

// sizeDone ends a chunk-size line: either chunk data or, after the
// last-chunk, the trailer section follows (RFC 9112 §7.1.2).
func (p *Parser) sizeDone() {
	p.nd = 0
	if p.rem == 0 {
		p.trailer = true
		p.headN = 0
		p.foldOK = false
		p.state = sLineStart
		return
	}
	p.state = sChunkData
}

// parseHead runs the head states over b, enforcing the block size limit
// exactly at the first byte past it so that the result does not depend on
// how the input is split.
func (p *Parser) parseHead(b []byte) (int, error) {
	w := b
	if limit := int(maxHeadBlock - p.headN); len(w) > limit {
		w = w[:limit]
	}
	i, end, err := p.headBytes(w)
	p.headN += int32(i)
	if err != nil {
		return i, err
	}
	if end {
		return i, p.endHead()
	}
	if i < len(b) {
		return i, ErrHeaderTooLarge
	}
	return i, nil
}

// endHead acts on the blank line ending a head or trailer block
// (RFC 9112 §6.3).
func (p *Parser) endHead() error {
	b := &p.blk
	switch {
	case p.trailer:
		p.state = sDone
	case b.status < 200:
		// Interim response: discard it; the final one follows (RFC 9110 §15.2).
		p.blk = block{}
		p.idx = 0
		p.headN = 0
		p.state = sVersion
	case !b.bodyHdrs:
		p.state = sDone
	case b.sawTE:
		if b.haveCL {
			return ErrContentLengthWithTransferEncoding
		}
		if b.teElems != 1 || b.teBad {
			return ErrUnsupportedTransferEncoding
		}
		p.chunked = true
		p.state = sChunkSize
	case b.haveCL:
		if b.cl == 0 {
			p.state = sDone
		} else {
			p.rem = b.cl
			p.state = sBodyCL
		}
	default:
		p.eofBody = true
		p.state = sBodyEOF
	}
	return nil
}

// startFields is called at the end of the status line.
func (p *Parser) startFields() {
	b := &p.blk
	b.bodyHdrs = !(p.head || b.status < 200 || b.status == 204 || b.status == 304)
	p.foldOK = false // a fold before any field line is ambiguous
	p.state = sLineStart
}

// headBytes runs the head states over b. It stops after the blank line
// ending the block (end=true), at a fault, or at the end of b.
func (p *Parser) headBytes(b []byte) (i int, end bool, err error) {
	for i < len(b) {
		c := b[i]
		switch p.state {
		case sVersion:
			if p.idx == 0 && len(b)-i >= 12 {
				// Fast path: the whole "HTTP/1.x NNN" is in b.
				if err := p.statusFast(b[i : i+12]); err != nil {
					return i, false, err
				}
				i += 12
				continue
			}
			if c != "HTTP/1."[p.idx] {
				return i, false, ErrBadStatusLine
			}
			p.idx++
			if p.idx == 7 {
				p.state = sMinor
			}
		case sMinor:
			if c < '0' || c > '9' {
				return i, false, ErrBadStatusLine
			}
			p.blk.http10 = c == '0'
			p.state = sSP
		case sSP:
			if c != ' ' {
				return i, false, ErrBadStatusLine
			}
			p.idx = 0
			p.state = sCode
		case sCode:
			if c < '0' || c > '9' {
				return i, false, ErrBadStatusLine
			}
			p.blk.status = p.blk.status*10 + int(c-'0')
			p.idx++
			if p.idx == 3 {
				if p.blk.status < 100 {
					return i, false, ErrBadStatusLine
				}
				if p.blk.status == 101 {
					return i, false, ErrUnexpected101
				}
				p.state = sAfterCode
			}
		case sAfterCode:
			switch c {
			case ' ':
				p.state = sReason
			case '\r':
				p.state = sStatusLF
			case '\n':
				p.startFields()
			default:
				return i, false, ErrBadStatusLine
			}
		case sReason:
			i = scanValue(b, i)
			if i == len(b) {
				return i, false, nil
			}
			switch b[i] {
			case '\r':
				p.state = sStatusLF
			case '\n':
				p.startFields()
			default:
				return i, false, ErrBadStatusLine
			}
		case sStatusLF:
			if c != '\n' {
				return i, false, ErrBadStatusLine
			}
			p.startFields()
		case sLineStart:
			switch {
			case c == '\r':
				p.state = sEndLF
			case c == '\n':
				return i + 1, true, nil
			case c == ' ' || c == '\t':
				// Obsolete line folding (RFC 9112 §5.2): the fold is
				// replaced by SP, so the line continues the value of the
				// last field, which is not interpreted. A fold before any
				// field line, or continuing Content-Length,
				// Transfer-Encoding or Connection, is refused: the
				// continuation could change framing or connection reuse.
				if !p.foldOK {
					return i, false, ErrObsFold
				}
				p.hk = 0
				p.state = sValue
			case tchar[c]:
				// Fast path: the whole name and its colon are in b.
				j := i + 1
				for j < len(b) && tchar[b[j]] {
					j++
				}
				if j < len(b) {
					if b[j] != ':' {
						return j, false, ErrBadHeader
					}
					var k uint8
					if !p.trailer {
						k = p.classify(b[i:j])
					}
					p.startValue(k)
					i = j + 1
					continue
				}
				p.cand = 0
				if !p.trailer {
					switch c | 0x20 {
					case 'c':
						p.cand = hConn | hCL
					case 't':
						p.cand = hTE
					}
				}
				p.nameN = 0
				p.state = sName
				continue // sName consumes c
			default:
				return i, false, ErrBadHeader
			}
		case sName:
			if p.cand == 0 {
				for i < len(b) && tchar[b[i]] {
					i++
				}
			} else {
				for i < len(b) && tchar[b[i]] {
					p.matchName(b[i])
					i++
				}
			}
			if i == len(b) {
				return i, false, nil
			}
			if b[i] != ':' {
				return i, false, ErrBadHeader
			}
			var hk uint8
			for k := 0; k < len(hdrNames); k++ {
				if p.cand&(1<<k) != 0 && int(p.nameN) == len(hdrNames[k]) {
					hk = 1 << k
				}
			}
			p.startValue(hk)
		case sValue:
			if p.hk == 0 {
				i = scanValue(b, i)
			} else if j := scanValue(b, i); p.vfresh && j < len(b) && p.valueFast(b[i:j]) {
				// Fast path: the whole value is in b and is one plain element.
				i = j
			} else {
				p.vfresh = false
				for i < len(b) && vchar[b[i]] {
					if err := p.valueByte(b[i]); err != nil {
						return i, false, err
					}
					i++
				}
			}
			if i == len(b) {
				return i, false, nil
			}
			switch b[i] {
			case '\r':
				p.state = sValueLF
			case '\n':
				if err := p.endValue(); err != nil {
					return i, false, err
				}
				p.state = sLineStart
			default:
				return i, false, ErrBadHeader
			}
		case sValueLF:
			if c != '\n' {
				return i, false, ErrBadHeader
			}
			if err := p.endValue(); err != nil {
				return i, false, err
			}
			p.state = sLineStart
		case sEndLF:
			if c != '\n' {
				return i, false, ErrBadHeader
			}
			return i + 1, true, nil
		}
		i++
	}
	return i, false, nil
}

// matchName narrows the candidate interpreted header names by one more name
// byte, case-insensitively.
func (p *Parser) matchName(c byte) {
	lc := c | 0x20
	for k := 0; k < len(hdrNames); k++ {
		if p.cand&(1<<k) != 0 {
			if n := hdrNames[k]; int(p.nameN) >= len(n) || n[p.nameN] != lc {
				p.cand &^= 1 << k
			}
		}
	}
	p.nameN++
}

// statusFast parses "HTTP/1.x NNN" (12 bytes) of a status line in one step,
// with the same outcome as the byte states.
func (p *Parser) statusFast(s []byte) error {
	if string(s[:7]) != "HTTP/1." || s[7] < '0' || s[7] > '9' || s[8] != ' ' {
		return ErrBadStatusLine
	}
	d0, d1, d2 := s[9]-'0', s[10]-'0', s[11]-'0'
	if d0 > 9 || d1 > 9 || d2 > 9 {
		return ErrBadStatusLine
	}
	st := int(d0)*100 + int(d1)*10 + int(d2)
	if st < 100 {
		return ErrBadStatusLine
	}
	if st == 101 {
		return ErrUnexpected101
	}
	p.blk.http10 = s[7] == '0'
	p.blk.status = st
	p.state = sAfterCode
	return nil
}

// classify returns the interpreted header bit for a complete field name,
// matching case-insensitively like matchName.
func (p *Parser) classify(name []byte) uint8 {
	var k int
	switch len(name) {
	case len("content-length"):
		k = 0
	case len("transfer-encoding"):
		k = 1
	case len("connection"):
		k = 2
	default:
		return 0
	}
	n := hdrNames[k]
	for i, c := range name {
		if c|0x20 != n[i] {
			return 0
		}
	}
	return 1 << k
}

// startValue is called at the colon ending a field name, with k the
// interpreted header bit of the name (0: none). Content-Length and
// Transfer-Encoding are recognized in every response so that a fold
// continuing them is refused, but they are interpreted only where they
// frame a body.
func (p *Parser) startValue(k uint8) {
	p.foldOK = k == 0
	if !p.blk.bodyHdrs {
		k &^= hCL | hTE
	}
	p.hk = k
	if p.hk == hTE {
		p.blk.sawTE = true
	}
	p.vst = 0
	p.vfresh = true
	p.state = sValue
}

// scanValue returns the index of the first byte of b at or after i that is
// not allowed in a field value. It tests eight bytes at a time.
func scanValue(b []byte, i int) int {
	const ones = 0x0101010101010101
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		lt20 := (x - 0x20*ones) &^ x & (0x80 * ones)
		y := x ^ (0x7f * ones)
		del := (y - ones) &^ y & (0x80 * ones)
		if lt20|del != 0 {
			break
		}
	}
	for i < len(b) && vchar[b[i]] {
		i++
	}
	return i
}

// valueFast handles a complete interpreted field value that is a single
// plain element: digits for Content-Length, a recognized word for
// Transfer-Encoding or Connection. It reports false, changing nothing, for
// any other value, which then goes through the byte states with the same
// outcome.
func (p *Parser) valueFast(v []byte) bool {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	if len(v) == 0 {
		return false
	}
	b := &p.blk
	switch p.hk {
	case hCL:
		if len(v) > maxCLDigits {
			return false
		}
		var n int64
		for _, c := range v {
			if c < '0' || c > '9' {
				return false
			}
			n = n*10 + int64(c-'0')
		}
		if b.haveCL && b.cl != n {
			return false // the byte states report the conflict
		}
		b.cl = n
		b.haveCL = true
	case hTE:
		if !eqFold(v, "chunked") {
			return false
		}
		b.teElems++
	default:
		switch {
		case eqFold(v, "keep-alive"):
			b.keepAlive = true
		case eqFold(v, "close"):
			b.connClose = true
		default:
			return false
		}
	}
	p.hk = 0 // the value is done: endValue has nothing left to do
	return true
}

// eqFold reports whether v equals the lower-case word w, ignoring ASCII case
// the way the byte states do.
func eqFold(v []byte, w string) bool {
	if len(v) != len(w) {
		return false
	}
	for i, c := range v {
		if c|0x20 != w[i] {
			return false
		}
	}
	return true
}

// valueByte feeds one byte of an interpreted field value.
func (p *Parser) valueByte(c byte) error {
	if p.hk == hCL {
		return p.clByte(c)
	}
	p.listByte(c)
	return nil
}

// endValue finishes an interpreted field value at the end of its line.
func (p *Parser) endValue() error {
	switch p.hk {
	case 0:
		return nil
	case hCL:
		if p.vst == 0 {
			return ErrBadContentLength
		}
		return p.clElem()
	}
	if p.vst != 0 {
		p.listElem()
	}
	return nil
}

// clByte parses Content-Length = 1*DIGIT, or a comma list of such values
// with OWS (RFC 9110 §8.6).
func (p *Parser) clByte(c byte) error {
	switch {
	case c == ' ' || c == '\t':
		if p.vst == 1 {
			p.vst = 2
		}
	case c >= '0' && c <= '9':
		switch p.vst {
		case 0:
			p.vst = 1
			p.cur = 0
			p.vn = 0
		case 2:
			return ErrBadContentLength
		}
		if p.vn == maxCLDigits {
			return ErrBadContentLength
		}
		p.cur = p.cur*10 + int64(c-'0')
		p.vn++
	case c == ',':
		if p.vst == 0 {
			return ErrBadContentLength
		}
		p.vst = 0
		return p.clElem()
	default:
		return ErrBadContentLength
	}
	return nil
}

// clElem records one Content-Length value; values must all be equal
// (RFC 9112 §6.3 item 5).
func (p *Parser) clElem() error {
	b := &p.blk
	if b.haveCL && b.cl != p.cur {
		return ErrConflictingContentLength
	}
	b.cl = p.cur
	b.haveCL = true
	return nil
}

// listByte parses a comma list of tokens with OWS (RFC 9110 §5.6.1) and
// matches each element against the recognized words.
func (p *Parser) listByte(c byte) {
	switch {
	case c == ' ' || c == '\t':
		if p.vst == 1 {
			p.vst = 2
		}
	case c == ',':
		if p.vst != 0 {
			p.listElem()
			p.vst = 0
		}
	default:
		switch p.vst {
		case 0:
			p.vst = 1
			p.vn = 0
			if p.hk == hTE {
				p.vmask = wChunked
			} else {
				p.vmask = wClose | wKeepAlive
			}
		case 2:
			p.vmask = 0 // whitespace inside an element
			p.vst = 1
		}
		if !tchar[c] {
			p.vmask = 0
		}
		if p.vmask != 0 {
			lc := c | 0x20
			for k := 0; k < len(listWords); k++ {
				if p.vmask&(1<<k) != 0 {
					if w := listWords[k]; int(p.vn) >= len(w) || w[p.vn] != lc {
						p.vmask &^= 1 << k
					}
				}
			}
		}
		if p.vn < maxHeadBlock {
			p.vn++
		}
	}
}

// listElem records one finished list element.
func (p *Parser) listElem() {
	var w uint8
	for k := 0; k < len(listWords); k++ {
		if p.vmask&(1<<k) != 0 && int(p.vn) == len(listWords[k]) {
			w = 1 << k
		}
	}
	b := &p.blk
	if p.hk == hTE {
		b.teElems++
		if w != wChunked {
			b.teBad = true
		}
		return
	}
	switch w {
	case wClose:
		b.connClose = true
	case wKeepAlive:
		b.keepAlive = true
	}
}
