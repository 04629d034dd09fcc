package conn

import (
	"crypto/tls"
	"net"
	"time"
)

// ProbeTLS reports whether the server at a speaks TLS: it dials once,
// sends a ClientHello (crypto/tls, no verification, nothing kept) and
// looks at the first bytes that come back within d — a TLS record
// (a ServerHello, or an alert refusing the hello) is TLS. It is a probe,
// not a request: its caller counts it in no phase.
func ProbeTLS(a Addr, d time.Duration) bool {
	c, err := net.DialTimeout("tcp", a.String(), d)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(d))
	f := &firstBytes{Conn: c}
	tls.Client(f, &tls.Config{InsecureSkipVerify: true}).Handshake() // whatever it ends with
	return LooksLikeTLS(f.head[:f.n])
}

// firstBytes keeps the first two bytes read through it.
type firstBytes struct {
	net.Conn
	head [2]byte
	n    int
}

func (f *firstBytes) Read(b []byte) (int, error) {
	n, err := f.Conn.Read(b)
	f.n += copy(f.head[f.n:], b[:n])
	return n, err
}

// LooksLikeTLS reports whether b starts a TLS record (change_cipher_spec,
// alert, handshake or application_data, version 3.x).
func LooksLikeTLS(b []byte) bool {
	return len(b) >= 2 && b[0] >= 0x14 && b[0] <= 0x17 && b[1] == 0x03
}
