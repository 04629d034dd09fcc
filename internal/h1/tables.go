package h1

// Byte classes used by the parser.
var (
	// tchar marks the token characters of RFC 9110 §5.6.2.
	tchar [256]bool
	// vchar marks bytes allowed in a field value or reason phrase:
	// HTAB, SP, VCHAR and obs-text (RFC 9110 §5.5, RFC 9112 §4).
	vchar [256]bool
	// unhex maps a HEXDIG to its value and every other byte to 0xff.
	unhex [256]uint8
)

func init() {
	for c := 0; c < 256; c++ {
		unhex[c] = 0xff
		switch {
		case c >= '0' && c <= '9':
			tchar[c] = true
			unhex[c] = uint8(c - '0')
		case c >= 'a' && c <= 'z':
			tchar[c] = true
			if c <= 'f' {
				unhex[c] = uint8(c - 'a' + 10)
			}
		case c >= 'A' && c <= 'Z':
			tchar[c] = true
			if c <= 'F' {
				unhex[c] = uint8(c - 'A' + 10)
			}
		}
		vchar[c] = c == '\t' || (c >= 0x20 && c != 0x7f)
	}
	for _, c := range []byte("!#$%&'*+-.^_`|~") {
		tchar[c] = true
	}
}
