package bench

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// fixtureTLS is the fixture's ephemeral certificate.
type fixtureTLS struct {
	cert    *x509.Certificate
	certPEM []byte
	config  *tls.Config
}

// newFixtureTLS creates a self-signed ECDSA P-256 certificate for
// "localhost", 127.0.0.1 and ::1, valid from an hour ago for one day, that
// is also its own CA (IsCA, KeyUsageCertSign|DigitalSignature,
// ExtKeyUsageServerAuth), and a server config offering only HTTP/1.1 via
// ALPN. Session tickets stay on (crypto/tls default).
func newFixtureTLS() (*fixtureTLS, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	sn, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          sn.Add(sn, big.NewInt(1)),
		Subject:               pkix.Name{CommonName: "localhost", Organization: []string{"brk fixture"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &fixtureTLS{
		cert:    cert,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		config: &tls.Config{
			Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}},
			NextProtos:   []string{"h2", "http/1.1"},
			MinVersion:   tls.VersionTLS12,
		},
	}, nil
}

// writeCA writes the certificate PEM to path atomically (temp file and
// rename), so a reader never sees a partial file.
func (t *fixtureTLS) writeCA(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".brk-ca-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(t.certPEM)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}

// setupTLS validates cfg's TLS fields and, when cfg.TLS, wraps ln in a TLS
// listener with an ephemeral certificate, writing it to cfg.CAPath if set.
func (f *Fixture) setupTLS(cfg FixtureConfig, ln net.Listener) (net.Listener, error) {
	if !cfg.TLS {
		return ln, nil
	}
	t, err := newFixtureTLS()
	if err != nil {
		return nil, fmt.Errorf("fixture: TLS certificate: %v", err)
	}
	if cfg.CAPath != "" {
		if err := t.writeCA(cfg.CAPath); err != nil {
			return nil, fmt.Errorf("fixture: write CA: %v", err)
		}
	}
	f.tls = t
	return tls.NewListener(ln, t.config), nil
}

// scheme returns "https" when the fixture serves TLS, else "http".
func (f *Fixture) scheme() string {
	if f.tls != nil {
		return "https"
	}
	return "http"
}

// CertPEM returns the PEM of the fixture's self-signed certificate (its own
// CA), or nil when it serves plain HTTP.
func (f *Fixture) CertPEM() []byte {
	if f.tls == nil {
		return nil
	}
	return f.tls.certPEM
}

// CertPool returns a pool trusting the fixture's certificate, or nil when
// it serves plain HTTP.
func (f *Fixture) CertPool() *x509.CertPool {
	if f.tls == nil {
		return nil
	}
	p := x509.NewCertPool()
	p.AddCert(f.tls.cert)
	return p
}
