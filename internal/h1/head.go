package h1

import "encoding/binary"

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
// ending the block (end=true), at a fault, or at the end of b. Each state
// has its function; each consumes what it can from b[i:] and returns the
// index of the next byte to read, or of the faulty byte with an error.
func (p *Parser) headBytes(b []byte) (i int, end bool, err error) {
	for i < len(b) && err == nil && !end {
		switch p.state {
		case sVersion:
			i, err = p.version(b, i)
		case sMinor, sSP, sCode, sAfterCode, sStatusLF:
			i, err = p.statusByte(b, i)
		case sReason:
			i, err = p.reason(b, i)
		case sLineStart:
			i, end, err = p.lineStart(b, i)
		case sName:
			i, err = p.name(b, i)
		case sValue:
			i, err = p.value(b, i)
		case sValueLF:
			i, err = p.valueLF(b, i)
		case sEndLF:
			i, end, err = p.endLF(b, i)
		}
	}
	return i, end, err
}

// version matches "HTTP/1." of the status line, byte by byte, or the whole
// "HTTP/1.x NNN" at once when it is in b.
func (p *Parser) version(b []byte, i int) (int, error) {
	if p.idx == 0 && len(b)-i >= 12 {
		if err := p.statusFast(b[i : i+12]); err != nil {
			return i, err
		}
		return i + 12, nil
	}
	if b[i] != "HTTP/1."[p.idx] {
		return i, ErrBadStatusLine
	}
	p.idx++
	if p.idx == 7 {
		p.state = sMinor
	}
	return i + 1, nil
}

// statusByte reads one byte of the status line after "HTTP/1.": the minor
// version, the SP, the status code's digits, and what follows the code or
// the reason phrase.
func (p *Parser) statusByte(b []byte, i int) (int, error) {
	c := b[i]
	switch p.state {
	case sMinor:
		if c < '0' || c > '9' {
			return i, ErrBadStatusLine
		}
		p.blk.http10 = c == '0'
		p.state = sSP
	case sSP:
		if c != ' ' {
			return i, ErrBadStatusLine
		}
		p.idx = 0
		p.state = sCode
	case sCode:
		if c < '0' || c > '9' {
			return i, ErrBadStatusLine
		}
		p.blk.status = p.blk.status*10 + int(c-'0')
		p.idx++
		if p.idx == 3 {
			if p.blk.status < 100 {
				return i, ErrBadStatusLine
			}
			if p.blk.status == 101 {
				return i, ErrUnexpected101
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
			return i, ErrBadStatusLine
		}
	case sStatusLF:
		if c != '\n' {
			return i, ErrBadStatusLine
		}
		p.startFields()
	}
	return i + 1, nil
}

// reason skips the reason phrase and reads the CR or LF ending it.
func (p *Parser) reason(b []byte, i int) (int, error) {
	i = scanValue(b, i)
	if i == len(b) {
		return i, nil
	}
	switch b[i] {
	case '\r':
		p.state = sStatusLF
		if i+1 < len(b) {
			return p.statusByte(b, i+1) // the LF is in b too
		}
	case '\n':
		p.startFields()
	default:
		return i, ErrBadStatusLine
	}
	return i + 1, nil
}

// lineStart reads the first byte of a field line, or the blank line
// ending the block (end=true). A name and its colon wholly in b are read
// at once; otherwise the name continues in sName.
func (p *Parser) lineStart(b []byte, i int) (int, bool, error) {
	c := b[i]
	switch {
	case c == '\r':
		p.state = sEndLF
		if i+1 < len(b) {
			return p.endLF(b, i+1) // the LF is in b too
		}
	case c == '\n':
		return i + 1, true, nil
	case c == ' ' || c == '\t':
		// Obsolete line folding (RFC 9112 §5.2): the fold is replaced by
		// SP, so the line continues the value of the last field, which is
		// not interpreted. A fold before any field line, or continuing
		// Content-Length, Transfer-Encoding or Connection, is refused: the
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
			return j + 1, false, nil
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
		return i, false, nil // sName consumes c
	default:
		return i, false, ErrBadHeader
	}
	return i + 1, false, nil
}

// name reads a field name up to its colon, narrowing the candidate
// interpreted names as it goes.
func (p *Parser) name(b []byte, i int) (int, error) {
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
		return i, nil
	}
	if b[i] != ':' {
		return i, ErrBadHeader
	}
	var hk uint8
	for k := 0; k < len(hdrNames); k++ {
		if p.cand&(1<<k) != 0 && int(p.nameN) == len(hdrNames[k]) {
			hk = 1 << k
		}
	}
	p.startValue(hk)
	return i + 1, nil
}

// value reads a field value and the CR or LF ending its line. An
// interpreted value (Content-Length, Transfer-Encoding, Connection) is
// parsed: at once when it is wholly in b and one plain element, byte by
// byte otherwise.
func (p *Parser) value(b []byte, i int) (int, error) {
	if p.hk == 0 {
		i = scanValue(b, i)
	} else if j := scanValue(b, i); p.vfresh && j < len(b) && p.valueFast(b[i:j]) {
		i = j
	} else {
		p.vfresh = false
		for i < len(b) && vchar[b[i]] {
			if err := p.valueByte(b[i]); err != nil {
				return i, err
			}
			i++
		}
	}
	if i == len(b) {
		return i, nil
	}
	switch b[i] {
	case '\r':
		p.state = sValueLF
		if i+1 < len(b) {
			return p.valueLF(b, i+1) // the LF is in b too
		}
	case '\n':
		if err := p.endValue(); err != nil {
			return i, err
		}
		p.state = sLineStart
	default:
		return i, ErrBadHeader
	}
	return i + 1, nil
}

// valueLF reads the LF after the CR ending a field line.
func (p *Parser) valueLF(b []byte, i int) (int, error) {
	if b[i] != '\n' {
		return i, ErrBadHeader
	}
	if err := p.endValue(); err != nil {
		return i, err
	}
	p.state = sLineStart
	return i + 1, nil
}

// endLF reads the LF after the CR of the blank line: the block ends.
func (p *Parser) endLF(b []byte, i int) (int, bool, error) {
	if b[i] != '\n' {
		return i, false, ErrBadHeader
	}
	return i + 1, true, nil
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
