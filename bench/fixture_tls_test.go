package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func startTLSFixture(t *testing.T) (*Fixture, string) {
	t.Helper()
	caPath := filepath.Join(t.TempDir(), "ca.pem")
	f := startFixture(t, FixtureConfig{TLS: true, CAPath: caPath})
	return f, caPath
}

func poolFromFile(t *testing.T, path string) *x509.CertPool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read CA: %v", err)
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(b) {
		t.Fatalf("CA file %s holds no PEM certificate:\n%s", path, b)
	}
	return p
}

func tlsClient(t *testing.T, cfg *tls.Config) *http.Client {
	t.Helper()
	// ForceAttemptHTTP2 offers h2 too: the fixture picks it (issue #9:
	// it serves h2 and http/1.1 over TLS).
	tr := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func TestFixtureTLSGet(t *testing.T) {
	f, caPath := startTLSFixture(t)
	if u := f.URL("/plain"); u != "https://"+f.Addr()+"/plain" {
		t.Fatalf("URL = %q", u)
	}
	pool := poolFromFile(t, caPath)
	file, _ := os.ReadFile(caPath)
	if !bytes.Equal(file, f.CertPEM()) {
		t.Errorf("CA file differs from CertPEM()")
	}
	c := tlsClient(t, &tls.Config{RootCAs: pool})
	r := do(t, c, testCtx(t), "GET", f.URL("/plain"), nil)
	if r.code != 200 || string(r.body) != "ok" {
		t.Fatalf("GET /plain: %d %q", r.code, r.body)
	}
	if r.resp.TLS == nil || r.resp.TLS.NegotiatedProtocol != "h2" || r.resp.ProtoMajor != 2 {
		t.Fatalf("proto %s, ALPN %+v; want HTTP/2 over TLS", r.resp.Proto, r.resp.TLS)
	}
	// The in-process pool works as well, and so does the name "localhost".
	c = tlsClient(t, &tls.Config{RootCAs: f.CertPool()})
	_, port, _ := net.SplitHostPort(f.Addr())
	r = do(t, c, testCtx(t), "GET", "https://localhost:"+port+"/hello", nil)
	if r.code != 200 || string(r.body) != "Hello, World!" {
		t.Fatalf("GET https://localhost/hello: %d %q", r.code, r.body)
	}
	if got := f.Requests(); got != 2 {
		t.Errorf("Requests() = %d, want 2", got)
	}
}

func TestFixtureTLSCertificate(t *testing.T) {
	f, caPath := startTLSFixture(t)
	b, _ := os.ReadFile(caPath)
	cert, err := x509.ParseCertificate(mustPEM(t, b))
	if err != nil {
		t.Fatal(err)
	}
	if !cert.IsCA || cert.KeyUsage&x509.KeyUsageCertSign == 0 || cert.KeyUsage&x509.KeyUsageDigitalSignature == 0 {
		t.Errorf("IsCA %v KeyUsage %b", cert.IsCA, cert.KeyUsage)
	}
	if life := cert.NotAfter.Sub(cert.NotBefore); life > 26*time.Hour || time.Until(cert.NotAfter) < 23*time.Hour {
		t.Errorf("validity %v .. %v", cert.NotBefore, cert.NotAfter)
	}
	pool := poolFromFile(t, caPath)
	for _, h := range []string{"localhost", "127.0.0.1", "::1"} {
		if _, err := cert.Verify(x509.VerifyOptions{DNSName: h, Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("verify for %s: %v", h, err)
		}
	}
	if err := cert.VerifyHostname("example.com"); err == nil {
		t.Errorf("certificate valid for example.com")
	}
	// Each fixture has its own certificate.
	g, _ := startTLSFixture(t)
	if bytes.Equal(f.CertPEM(), g.CertPEM()) {
		t.Errorf("two fixtures share a certificate")
	}
}

func mustPEM(t *testing.T, b []byte) []byte {
	t.Helper()
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" {
		t.Fatalf("no PEM certificate in %q", b)
	}
	return blk.Bytes
}

func TestFixtureTLSUntrusted(t *testing.T) {
	f, _ := startTLSFixture(t)
	c := tlsClient(t, &tls.Config{})
	req, _ := http.NewRequestWithContext(testCtx(t), "GET", f.URL("/plain"), nil)
	resp, err := c.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("GET without the CA succeeded")
	}
	var cve *tls.CertificateVerificationError
	var uae x509.UnknownAuthorityError
	if !errors.As(err, &cve) || !errors.As(err, &uae) {
		t.Fatalf("err %v (%T), want a certificate verification error (unknown authority)", err, err)
	}
	if got := f.Requests(); got != 0 {
		t.Errorf("Requests() = %d, want 0", got)
	}
}

func TestFixtureTLSPipelined(t *testing.T) {
	f, caPath := startTLSFixture(t)
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", f.Addr(),
		&tls.Config{RootCAs: poolFromFile(t, caPath), ServerName: "localhost", NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if p := conn.ConnectionState().NegotiatedProtocol; p != "http/1.1" {
		t.Fatalf("ALPN %q, want http/1.1", p)
	}
	// The slow request goes first: its response must still come first.
	paths := []string{"/delay?ms=50", "/hello", "/json", "/plain", "/status?code=404"}
	wantBody := []string{"ok", "Hello, World!", `{"message":"Hello, World!"}`, "ok", "ok"}
	wantCode := []int{200, 200, 200, 200, 404}
	var all strings.Builder
	for _, p := range paths {
		fmt.Fprintf(&all, "GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n", p)
	}
	if _, err := io.WriteString(conn, all.String()); err != nil { // one write: pipelined
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	for i, p := range paths {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d (%s): %v", i, p, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("response %d (%s) body: %v", i, p, err)
		}
		if resp.StatusCode != wantCode[i] || string(b) != wantBody[i] {
			t.Fatalf("response %d (%s): %d %q, want %d %q", i, p, resp.StatusCode, b, wantCode[i], wantBody[i])
		}
	}
	if got := f.Requests(); got != int64(len(paths)) {
		t.Errorf("Requests() = %d, want %d", got, len(paths))
	}
}

func TestFixtureTLSResumption(t *testing.T) {
	f, _ := startTLSFixture(t)
	for _, ver := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		cfg := &tls.Config{RootCAs: f.CertPool(), ServerName: "localhost", MinVersion: ver, MaxVersion: ver,
			ClientSessionCache: tls.NewLRUClientSessionCache(4)}
		for i := range 2 {
			c, err := tls.Dial("tcp", f.Addr(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			c.SetDeadline(time.Now().Add(5 * time.Second))
			io.WriteString(c, "GET /plain HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
			io.Copy(io.Discard, c) // reads the TLS 1.3 session ticket too
			st := c.ConnectionState()
			c.Close()
			if st.Version != ver || st.DidResume != (i == 1) {
				t.Fatalf("version %x connection %d: version %x DidResume %v", ver, i, st.Version, st.DidResume)
			}
		}
	}
}

func TestFixtureTLSConfigErrors(t *testing.T) {
	if _, err := StartFixture(FixtureConfig{CAPath: filepath.Join(t.TempDir(), "ca.pem")}); err == nil {
		t.Error("CAPath without TLS accepted")
	}
	_, err := StartFixture(FixtureConfig{TLS: true, CAPath: filepath.Join(t.TempDir(), "missing", "ca.pem")})
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("CAPath in a missing directory: err %v, want a one-line error", err)
	}
	// Plain fixtures are unchanged.
	f := startFixture(t, FixtureConfig{})
	if !strings.HasPrefix(f.URL("/"), "http://") || f.CertPEM() != nil || f.CertPool() != nil {
		t.Errorf("plain fixture: URL %q, CertPEM %v", f.URL("/"), f.CertPEM() != nil)
	}
}

func TestServeFixtureTLS(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	caPath := filepath.Join(t.TempDir(), "ca.pem")
	done := make(chan error, 1)
	go func() { done <- ServeFixture(ctx, FixtureConfig{TLS: true, CAPath: caPath}, pw) }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "listening on https://127.0.0.1:"
	if !strings.HasPrefix(line, prefix) {
		t.Fatalf("ServeFixture printed %q", line)
	}
	url := strings.TrimSpace(strings.TrimPrefix(line, "listening on ")) + "/plain"
	r := do(t, tlsClient(t, &tls.Config{RootCAs: poolFromFile(t, caPath)}), testCtx(t), "GET", url, nil)
	if r.code != 200 {
		t.Fatalf("GET %s: %d", url, r.code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("ServeFixture: %v", err)
	}
}

// TestFixtureChildHelper is not a test: it is the `fixture` command for
// TestFixtureProcessTLS, run by the test binary itself through a script.
func TestFixtureChildHelper(t *testing.T) {
	if os.Getenv("BRK_FIXTURE_CHILD_HELPER") != "1" {
		t.Skip("helper process only")
	}
	args := flag.Args()
	if len(args) == 0 || args[0] != "fixture" {
		fmt.Fprintf(os.Stderr, "helper: args %q\n", args)
		os.Exit(2)
	}
	fs := flag.NewFlagSet("fixture", flag.ContinueOnError)
	var cfg FixtureConfig
	fs.StringVar(&cfg.Addr, "listen", "", "")
	fs.IntVar(&cfg.Capacity, "capacity", 0, "")
	fs.DurationVar(&cfg.Service, "service", 0, "")
	fs.StringVar(&cfg.DelayDist, "delay-dist", "", "")
	fs.BoolVar(&cfg.TLS, "tls", false, "")
	fs.StringVar(&cfg.CAPath, "ca-out", "", "")
	if err := fs.Parse(args[1:]); err != nil {
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := ServeFixture(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

func TestFixtureProcessTLS(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Skipf("os.Executable: %v", err)
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "brk")
	// atexit_sleep_ms=0 spares a -race child the race runtime's 1 s sleep
	// at exit.
	script := fmt.Sprintf("#!/bin/sh\nGORACE=\"$GORACE atexit_sleep_ms=0\" BRK_FIXTURE_CHILD_HELPER=1 exec '%s' -test.run='^TestFixtureChildHelper$' -- \"$@\"\n", self)
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	caPath := filepath.Join(dir, "ca.pem")
	p, err := StartFixtureProcess(exe, FixtureConfig{TLS: true, CAPath: caPath})
	if err != nil {
		t.Fatalf("StartFixtureProcess: %v", err)
	}
	defer p.Close()
	if !strings.HasPrefix(p.URL("/x"), "https://127.0.0.1:") || !strings.HasSuffix(p.URL("/x"), "/x") {
		t.Fatalf("URL = %q", p.URL("/x"))
	}
	r := do(t, tlsClient(t, &tls.Config{RootCAs: poolFromFile(t, caPath)}), testCtx(t), "GET", p.URL("/plain"), nil)
	if r.code != 200 || string(r.body) != "ok" {
		t.Fatalf("GET /plain: %d %q", r.code, r.body)
	}

	// A plain child still reports http://.
	q, err := StartFixtureProcess(exe, FixtureConfig{})
	if err != nil {
		t.Fatalf("StartFixtureProcess plain: %v", err)
	}
	defer q.Close()
	if !strings.HasPrefix(q.URL("/"), "http://127.0.0.1:") {
		t.Fatalf("plain URL = %q", q.URL("/"))
	}
}

// TestFixtureTLSOffersH2: a client offering h2 and http/1.1 gets h2.
func TestFixtureTLSOffersH2(t *testing.T) {
	f, caPath := startTLSFixture(t)
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", f.Addr(),
		&tls.Config{RootCAs: poolFromFile(t, caPath), ServerName: "localhost", NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("ALPN %q, want h2", p)
	}
}
