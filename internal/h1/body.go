package h1

import "bytes"

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
// that failed the check, nil otherwise. Its bytes stay until a later body
// fails its check (Reset keeps them).
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
