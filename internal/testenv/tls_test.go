package testenv

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// tlsGet dials addr with cfg, writes a raw HTTP/1.1 GET / and returns the
// connection state, status code and body. Any error is returned, not
// fatal, so callers can examine failures.
func tlsGet(addr string, cfg *tls.Config) (tls.ConnectionState, int, string, error) {
	d := &net.Dialer{Timeout: 5 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return tls.ConnectionState{}, 0, "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"); err != nil {
		return c.ConnectionState(), 0, "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return c.ConnectionState(), 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	// Read to EOF so that TLS 1.3 NewSessionTicket messages sent after
	// the handshake are processed before the connection closes.
	io.Copy(io.Discard, c)
	return c.ConnectionState(), resp.StatusCode, string(b), err
}

func clientConfig(ca *CA) *tls.Config {
	return &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"}
}

func mustOK(t *testing.T, addr string, cfg *tls.Config) tls.ConnectionState {
	t.Helper()
	st, code, body, err := tlsGet(addr, cfg)
	if err != nil {
		t.Fatalf("GET over TLS: %v", err)
	}
	if code != 200 || body != "ok" {
		t.Fatalf("GET over TLS: status %d body %q, want 200 ok", code, body)
	}
	return st
}

func TestCAAndLeaves(t *testing.T) {
	ca := NewCA(t)
	if !ca.Cert.IsCA {
		t.Fatal("CA certificate is not a CA")
	}
	if b, err := os.ReadFile(ca.CertPath); err != nil || string(b) != string(ca.CertPEM) {
		t.Fatalf("CertPath contents differ from CertPEM (err %v)", err)
	}
	if life := ca.Cert.NotAfter.Sub(ca.Cert.NotBefore); life > 26*time.Hour || time.Until(ca.Cert.NotAfter) < 23*time.Hour {
		t.Fatalf("CA validity %v .. %v", ca.Cert.NotBefore, ca.Cert.NotAfter)
	}
	srv := ca.Server(t, "localhost", "127.0.0.1", "example.test")
	for _, h := range []string{"localhost", "127.0.0.1", "example.test"} {
		if err := srv.Cert.Leaf.VerifyHostname(h); err != nil {
			t.Errorf("server leaf: %v", err)
		}
	}
	if _, err := srv.Cert.Leaf.Verify(x509.VerifyOptions{Roots: ca.Pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Errorf("server leaf does not verify for server auth: %v", err)
	}
	if _, err := tls.LoadX509KeyPair(srv.CertPath, srv.KeyPath); err != nil {
		t.Errorf("server files: %v", err)
	}
	cl := ca.Client(t, "brk-client")
	if _, err := cl.Cert.Leaf.Verify(x509.VerifyOptions{Roots: ca.Pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client leaf does not verify for client auth: %v", err)
	}
	if _, err := cl.Cert.Leaf.Verify(x509.VerifyOptions{Roots: ca.Pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
		t.Errorf("client leaf verifies for server auth")
	}
	if _, err := srv.Cert.Leaf.Verify(x509.VerifyOptions{Roots: NewCA(t).Pool}); err == nil {
		t.Errorf("server leaf verifies against another CA")
	}
}

func TestNginxTLSConfig(t *testing.T) {
	ca := NewCA(t)
	leaf := ca.Server(t, "localhost")
	conf := nginxConfig("/p", "127.0.0.1:1", NginxOptions{
		ListenSuffix: "ssl",
		ServerExtra:  nginxTLSServer(NginxTLSOptions{Leaf: leaf, ClientCA: ca, Ciphers: "ECDHE-ECDSA-AES128-GCM-SHA256"}),
	})
	for _, want := range []string{
		"listen 127.0.0.1:1 ssl;", "ssl_certificate " + leaf.CertPath + ";",
		"ssl_certificate_key " + leaf.KeyPath + ";", "ssl_protocols TLSv1.2 TLSv1.3;",
		"ssl_ecdh_curve auto;", "ssl_session_cache shared:SSL:10m;", "ssl_session_tickets on;",
		"ssl_ciphers ECDHE-ECDSA-AES128-GCM-SHA256;", "ssl_client_certificate " + ca.CertPath + ";",
		"ssl_verify_client on;", `location / { return 200 "ok"; }`,
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("config lacks %q:\n%s", want, conf)
		}
	}
}

func TestNginxTLSVersions(t *testing.T) {
	ca := NewCA(t)
	n := StartNginxTLS(t, NginxTLSOptions{Leaf: ca.Server(t, "localhost", "127.0.0.1")})

	st := mustOK(t, n.Addr, clientConfig(ca))
	if st.Version != tls.VersionTLS13 {
		t.Errorf("default version %x, want TLS 1.3", st.Version)
	}

	cfg := clientConfig(ca)
	cfg.MaxVersion = tls.VersionTLS12
	if st := mustOK(t, n.Addr, cfg); st.Version != tls.VersionTLS12 {
		t.Errorf("MaxVersion TLS 1.2 negotiated %x", st.Version)
	}

	cfg = clientConfig(ca)
	cfg.MinVersion = tls.VersionTLS13
	if st := mustOK(t, n.Addr, cfg); st.Version != tls.VersionTLS13 {
		t.Errorf("MinVersion TLS 1.3 negotiated %x", st.Version)
	}

	// The IP SAN verifies too.
	cfg = &tls.Config{RootCAs: ca.Pool, ServerName: "127.0.0.1"}
	mustOK(t, n.Addr, cfg)

	// Without the CA the handshake fails verification.
	_, _, _, err := tlsGet(n.Addr, &tls.Config{ServerName: "localhost"})
	var uerr x509.UnknownAuthorityError
	if !errors.As(err, &uerr) {
		t.Errorf("without the CA: err %v, want x509.UnknownAuthorityError", err)
	}

	if got := n.WaitRequests(t, 4, 5*time.Second); got != 4 {
		t.Errorf("access log has %d lines, want 4\n%s", got, n.ErrorLog())
	}
}

func TestNginxTLSProtocolsCiphersCurves(t *testing.T) {
	ca := NewCA(t)
	n := StartNginxTLS(t, NginxTLSOptions{
		Leaf:      ca.Server(t, "localhost"),
		Protocols: "TLSv1.2",
		Ciphers:   "ECDHE-ECDSA-AES128-GCM-SHA256",
		Curves:    "prime256v1",
	})
	st := mustOK(t, n.Addr, clientConfig(ca))
	if st.Version != tls.VersionTLS12 {
		t.Errorf("version %x, want TLS 1.2", st.Version)
	}
	if st.CipherSuite != tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 {
		t.Errorf("cipher %s, want TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", tls.CipherSuiteName(st.CipherSuite))
	}
	if st.CurveID != tls.CurveP256 {
		t.Errorf("curve %v, want P-256", st.CurveID)
	}
	cfg := clientConfig(ca)
	cfg.MinVersion = tls.VersionTLS13
	if _, _, _, err := tlsGet(n.Addr, cfg); err == nil {
		t.Errorf("TLS 1.3 client got through a TLSv1.2-only nginx")
	}
}

func TestNginxTLSResumption(t *testing.T) {
	ca := NewCA(t)
	n := StartNginxTLS(t, NginxTLSOptions{Leaf: ca.Server(t, "localhost")})
	for _, v := range []struct {
		name string
		ver  uint16
	}{{"TLS1.2", tls.VersionTLS12}, {"TLS1.3", tls.VersionTLS13}} {
		t.Run(v.name, func(t *testing.T) {
			cfg := clientConfig(ca)
			cfg.MinVersion, cfg.MaxVersion = v.ver, v.ver
			cfg.ClientSessionCache = tls.NewLRUClientSessionCache(8)
			if st := mustOK(t, n.Addr, cfg); st.DidResume {
				t.Fatal("first connection resumed")
			}
			if st := mustOK(t, n.Addr, cfg); !st.DidResume {
				t.Fatal("second connection with the same session cache did not resume")
			}
		})
	}
}

func TestNginxMTLS(t *testing.T) {
	ca := NewCA(t)
	n := StartNginxTLS(t, NginxTLSOptions{Leaf: ca.Server(t, "localhost"), ClientCA: ca})

	for _, ver := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		// Without a client certificate nginx (ssl_verify_client on)
		// completes the handshake and answers 400.
		cfg := clientConfig(ca)
		cfg.MaxVersion = ver
		_, code, body, err := tlsGet(n.Addr, cfg)
		t.Logf("no client cert, max version %x: status %d, err %v, body %.60q", ver, code, err, body)
		if err == nil && code == 200 {
			t.Fatalf("no client cert: got 200")
		}
		if err == nil && (code != 400 || !strings.Contains(body, "No required SSL certificate was sent")) {
			t.Errorf("no client cert: status %d body %q, want 400 No required SSL certificate was sent", code, body)
		}

		cfg = clientConfig(ca)
		cfg.MaxVersion = ver
		cfg.Certificates = []tls.Certificate{ca.Client(t, "brk-client").Cert}
		mustOK(t, n.Addr, cfg)
	}

	// A client certificate from another CA is refused too.
	cfg := clientConfig(ca)
	cfg.Certificates = []tls.Certificate{NewCA(t).Client(t, "stranger").Cert}
	_, code, _, err := tlsGet(n.Addr, cfg)
	t.Logf("foreign client cert: status %d, err %v", code, err)
	if err == nil && code == 200 {
		t.Fatal("foreign client cert: got 200")
	}
}

func TestStallHandshake(t *testing.T) {
	addr := StallHandshake(t)
	d := &net.Dialer{Deadline: time.Now().Add(200 * time.Millisecond)}
	start := time.Now()
	c, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{ServerName: "localhost"})
	el := time.Since(start)
	if err == nil {
		c.Close()
		t.Fatal("handshake with a stalled server succeeded")
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("err %v, want a timeout", err)
	}
	if el < 150*time.Millisecond || el > 2*time.Second {
		t.Fatalf("timed out after %v, want about 200ms", el)
	}
	// Plain TCP connects at once: the listener accepts.
	tc, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatalf("TCP dial: %v", err)
	}
	tc.Close()
}
