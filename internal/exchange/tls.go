package exchange

// TLSInfo is what a TLS handshake negotiated (zero for plain TCP): the
// transport (conn) fills it at setup, and the engine's measurement
// (metrics) keeps a phase's last one for its report.
type TLSInfo struct {
	Version     uint16 `json:"version"`
	CipherSuite uint16 `json:"cipher_suite"`
	Group       uint16 `json:"group"` // a tls.CurveID
	Resumed     bool   `json:"resumed"`
	// ALPN is the protocol the server selected ("" for none); the
	// measurement does not keep it.
	ALPN string `json:"-"`
}
