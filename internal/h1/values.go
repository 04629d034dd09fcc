package h1

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
