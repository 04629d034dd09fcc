package judge

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strings"
	"testing"
)

// A certificate that did not verify says what to do next; other setup
// errors are said as they are.
func TestSetupErrorText(t *testing.T) {
	cert := &x509.Certificate{DNSNames: []string{"localhost"}}
	for _, c := range []struct {
		err  error
		want string
	}{
		{&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{Cert: cert}},
			"x509: certificate signed by unknown authority: give the server's CA with Target.TLS.CACert, or skip verification with Target.TLS.Insecure"},
		{&tls.CertificateVerificationError{Err: x509.HostnameError{Certificate: cert, Host: "127.0.0.1"}},
			"doesn't contain any IP SANs: use a name the certificate holds, or skip verification with Target.TLS.Insecure"},
		{&tls.CertificateVerificationError{Err: x509.CertificateInvalidError{Cert: cert, Reason: x509.Expired}},
			"expired or is not yet valid: : if you trust this server, skip verification with Target.TLS.Insecure"},
		{errors.New("connection refused"), "connection refused"},
	} {
		got := SetupErrorText(c.err, LibraryNames())
		if !strings.Contains(got, c.want) {
			t.Errorf("%v: %q, want it to hold %q", c.err, got, c.want)
		}
	}
	if got := SetupErrorText(errors.New("connection refused"), LibraryNames()); got != "connection refused" {
		t.Errorf("a refusal: %q", got)
	}
}
