package testenv

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
	"strings"
	"sync"
	"testing"
	"time"
)

// CA is a test certificate authority (ECDSA P-256, valid for one day).
type CA struct {
	CertPEM  []byte         // the CA certificate, PEM encoded
	CertPath string         // file holding CertPEM (in the test's temp dir)
	Pool     *x509.CertPool // holds just this CA: use as RootCAs or ClientCAs
	Cert     *x509.Certificate

	key *ecdsa.PrivateKey
}

// Leaf is a certificate issued by a CA, with its key.
type Leaf struct {
	CertPath string          // PEM certificate file (the leaf only, no chain)
	KeyPath  string          // PEM PKCS#8 private key file
	Cert     tls.Certificate // the same pair, Leaf field set
}

func serial(tb testing.TB) *big.Int {
	tb.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		tb.Fatalf("testenv: serial: %v", err)
	}
	return n.Add(n, big.NewInt(1)) // never zero
}

func writePEM(tb testing.TB, path, typ string, der []byte) []byte {
	tb.Helper()
	b := pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		tb.Fatalf("testenv: write %s: %v", path, err)
	}
	return b
}

// NewCA creates an ECDSA P-256 CA valid from an hour ago for one day and
// writes its certificate PEM to ca.pem in a fresh tb.TempDir().
func NewCA(tb testing.TB) *CA {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatalf("testenv: CA key: %v", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(tb),
		Subject:               pkix.Name{CommonName: "brk test CA", Organization: []string{"brk testenv"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatalf("testenv: CA certificate: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatalf("testenv: parse CA certificate: %v", err)
	}
	path := filepath.Join(tb.TempDir(), "ca.pem")
	ca := &CA{CertPath: path, Cert: cert, Pool: x509.NewCertPool(), key: key}
	ca.CertPEM = writePEM(tb, path, "CERTIFICATE", der)
	ca.Pool.AddCert(cert)
	return ca
}

// Server issues a server certificate (ExtKeyUsageServerAuth) for hosts,
// each a DNS name ("localhost", "example.test") or an IP address
// ("127.0.0.1", "::1"); the first host is also the subject's CommonName.
// No hosts means "localhost" and "127.0.0.1".
func (ca *CA) Server(tb testing.TB, hosts ...string) *Leaf {
	tb.Helper()
	if len(hosts) == 0 {
		hosts = []string{"localhost", "127.0.0.1"}
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: hosts[0]},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return ca.issue(tb, tmpl, "server")
}

// Client issues a client certificate (ExtKeyUsageClientAuth) with
// CommonName cn.
func (ca *CA) Client(tb testing.TB, cn string) *Leaf {
	tb.Helper()
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	return ca.issue(tb, tmpl, "client")
}

func (ca *CA) issue(tb testing.TB, tmpl *x509.Certificate, name string) *Leaf {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatalf("testenv: %s key: %v", name, err)
	}
	tmpl.SerialNumber = serial(tb)
	tmpl.NotBefore = ca.Cert.NotBefore
	tmpl.NotAfter = ca.Cert.NotAfter
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.BasicConstraintsValid = true
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		tb.Fatalf("testenv: %s certificate: %v", name, err)
	}
	leafCert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatalf("testenv: parse %s certificate: %v", name, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		tb.Fatalf("testenv: marshal %s key: %v", name, err)
	}
	dir := tb.TempDir()
	l := &Leaf{
		CertPath: filepath.Join(dir, name+".pem"),
		KeyPath:  filepath.Join(dir, name+"-key.pem"),
	}
	writePEM(tb, l.CertPath, "CERTIFICATE", der)
	writePEM(tb, l.KeyPath, "PRIVATE KEY", keyDER)
	l.Cert = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leafCert}
	return l
}

// NginxTLSOptions configures StartNginxTLS.
type NginxTLSOptions struct {
	// Leaf is the server certificate; nil means a fresh CA's
	// Server("localhost", "127.0.0.1").
	Leaf *Leaf
	// ClientCA, when set, makes nginx require a client certificate issued
	// by it (ssl_client_certificate + ssl_verify_client on). nginx still
	// completes the handshake without one and answers each request 400
	// "No required SSL certificate was sent".
	ClientCA *CA
	// Protocols is ssl_protocols; "" means "TLSv1.2 TLSv1.3".
	Protocols string
	// Ciphers is ssl_ciphers (TLS 1.2 suites, OpenSSL names); "" leaves
	// nginx's default.
	Ciphers string
	// Curves is ssl_ecdh_curve, e.g. "X25519" or "prime256v1"; "" means
	// "auto".
	Curves string
	// Nginx holds further StartNginx options (Location, Workers,
	// KeepaliveRequests, ExtraHTTP, ServerExtra, ListenSuffix); "ssl" is
	// put before its ListenSuffix.
	Nginx NginxOptions
}

// nginxTLSServer renders the server-block directives for opt.
func nginxTLSServer(opt NginxTLSOptions) string {
	protocols := opt.Protocols
	if protocols == "" {
		protocols = "TLSv1.2 TLSv1.3"
	}
	curves := opt.Curves
	if curves == "" {
		curves = "auto"
	}
	d := []string{
		fmt.Sprintf("ssl_certificate %s;", opt.Leaf.CertPath),
		fmt.Sprintf("ssl_certificate_key %s;", opt.Leaf.KeyPath),
		fmt.Sprintf("ssl_protocols %s;", protocols),
		fmt.Sprintf("ssl_ecdh_curve %s;", curves),
		"ssl_session_cache shared:SSL:10m;",
		"ssl_session_tickets on;",
	}
	if opt.Ciphers != "" {
		d = append(d, fmt.Sprintf("ssl_ciphers %s;", opt.Ciphers))
	}
	if opt.ClientCA != nil {
		d = append(d,
			fmt.Sprintf("ssl_client_certificate %s;", opt.ClientCA.CertPath),
			"ssl_verify_client on;")
	}
	if opt.Nginx.ServerExtra != "" {
		d = append(d, opt.Nginx.ServerExtra)
	}
	return strings.Join(d, "\n    ")
}

// StartNginxTLS starts a private nginx (see StartNginx) serving HTTPS on
// `listen 127.0.0.1:PORT ssl;` with opt.Leaf, shared session cache and
// session tickets on, and by default `location / { return 200 "ok"; }`
// and an access log (Requests, WaitRequests). The returned Addr is the
// host:port to dial; use ServerName "localhost" (or any host of the leaf).
func StartNginxTLS(tb testing.TB, opt NginxTLSOptions) *Nginx {
	tb.Helper()
	if opt.Leaf == nil {
		opt.Leaf = NewCA(tb).Server(tb, "localhost", "127.0.0.1")
	}
	nopt := opt.Nginx
	nopt.ListenSuffix = strings.TrimSpace("ssl " + nopt.ListenSuffix)
	nopt.ServerExtra = nginxTLSServer(opt)
	return StartNginx(tb, nopt)
}

// StallHandshake starts a listener on 127.0.0.1 that accepts TCP
// connections, never reads or writes a byte (so no TLS handshake ever
// completes) and holds them open. It returns the listener's address and
// closes the listener and all accepted connections in tb.Cleanup.
func StallHandshake(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("testenv: listen: %v", err)
	}
	var (
		mu     sync.Mutex
		conns  []net.Conn
		closed bool
		done   = make(chan struct{})
	)
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if closed {
				c.Close()
			} else {
				conns = append(conns, c)
			}
			mu.Unlock()
		}
	}()
	tb.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		closed = true
		for _, c := range conns {
			c.Close()
		}
		conns = nil
		mu.Unlock()
	})
	return ln.Addr().String()
}
