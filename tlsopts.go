package brk

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"
)

// TLSOptions configure https:// targets.
type TLSOptions struct {
	CACert   string // PEM file of authorities to trust instead of the system's
	Insecure bool   // skip server certificate verification (not with CACert)
	Version  string // "1.2" or "1.3": offer only this version
	Group    string // offer only this key exchange group (X25519, secp256r1, X25519MLKEM768, …)
	Cipher   string // offer only this cipher suite (IANA name; TLS 1.2 suites)
	Cert     string // client certificate PEM (mTLS), with Key
	Key      string // client key PEM
	NoResume bool   // every handshake a full one
}

func (o TLSOptions) set() bool {
	return o.CACert != "" || o.Insecure || o.Version != "" || o.Group != "" || o.Cipher != "" ||
		o.Cert != "" || o.Key != "" || o.NoResume
}

// groups maps the accepted TLSOptions.Group names to crypto/tls IDs.
var groups = map[string]tls.CurveID{
	"x25519":             tls.X25519,
	"secp256r1":          tls.CurveP256,
	"p-256":              tls.CurveP256,
	"prime256v1":         tls.CurveP256,
	"secp384r1":          tls.CurveP384,
	"p-384":              tls.CurveP384,
	"secp521r1":          tls.CurveP521,
	"p-521":              tls.CurveP521,
	"x25519mlkem768":     tls.X25519MLKEM768,
	"secp256r1mlkem768":  tls.SecP256r1MLKEM768,
	"secp384r1mlkem1024": tls.SecP384r1MLKEM1024,
}

// groupName is the name brk reports for a negotiated group.
func groupName(id tls.CurveID) string {
	switch id {
	case 0:
		return ""
	case tls.X25519:
		return "X25519"
	case tls.CurveP256:
		return "secp256r1"
	case tls.CurveP384:
		return "secp384r1"
	case tls.CurveP521:
		return "secp521r1"
	case tls.X25519MLKEM768:
		return "X25519MLKEM768"
	case tls.SecP256r1MLKEM768:
		return "SecP256r1MLKEM768"
	case tls.SecP384r1MLKEM1024:
		return "SecP384r1MLKEM1024"
	}
	return id.String()
}

// versionName is "1.2" or "1.3" for a negotiated version.
func versionName(v uint16) string {
	switch v {
	case 0:
		return ""
	case tls.VersionTLS12:
		return "1.2"
	case tls.VersionTLS13:
		return "1.3"
	}
	return tls.VersionName(v)
}

// tlsConfig builds the client configuration for an https:// target, or a
// *PlanError for a combination that cannot be offered. Its ALPN offer
// (NextProtos) is the protocol's, which prepare sets (Protocol.ALPN).
func tlsConfig(o TLSOptions, serverName string) (*tls.Config, error) {
	cfg := &tls.Config{
		ServerName: serverName,
		MinVersion: tls.VersionTLS12,
	}
	if o.CACert != "" && o.Insecure {
		return nil, refuse("%s and %s cannot be combined", fCACert, fInsecure)
	}
	if o.CACert != "" {
		pem, err := os.ReadFile(o.CACert)
		if err != nil {
			return nil, refuse("%s: %v", fCACert, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, refuse("%s %s: no PEM certificate in it", fCACert, o.CACert)
		}
		cfg.RootCAs = pool
	}
	cfg.InsecureSkipVerify = o.Insecure
	switch o.Version {
	case "":
	case "1.2":
		cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
	case "1.3":
		cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS13, tls.VersionTLS13
	default:
		return nil, refuse("%s %q: want 1.2 or 1.3", fTLSVersion, o.Version)
	}
	if o.Group != "" {
		id, ok := groups[strings.ToLower(o.Group)]
		if !ok {
			return nil, refuse("%s %q: want X25519, secp256r1, secp384r1, secp521r1, X25519MLKEM768, SecP256r1MLKEM768 or SecP384r1MLKEM1024", fTLSGroup, o.Group)
		}
		if id >= tls.SecP256r1MLKEM768 && cfg.MaxVersion == tls.VersionTLS12 {
			return nil, refuse("%s %s needs TLS 1.3; it cannot be offered with %s 1.2", fTLSGroup, o.Group, fTLSVersion)
		}
		cfg.CurvePreferences = []tls.CurveID{id}
		if id >= tls.SecP256r1MLKEM768 {
			cfg.MinVersion = tls.VersionTLS13
		}
	}
	if o.Cipher != "" {
		name := strings.ToUpper(o.Cipher)
		name = strings.Replace(name, "TLS13_", "TLS_", 1)
		var suite *tls.CipherSuite
		for _, list := range [][]*tls.CipherSuite{tls.CipherSuites(), tls.InsecureCipherSuites()} {
			for _, cs := range list {
				if cs.Name == name {
					suite = cs
				}
			}
		}
		if suite == nil {
			return nil, refuse("%s %q: not a cipher suite crypto/tls knows (IANA names, e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)", fTLSCipher, o.Cipher)
		}
		tls12 := false
		for _, v := range suite.SupportedVersions {
			if v == tls.VersionTLS12 {
				tls12 = true
			}
		}
		if !tls12 {
			return nil, refuse("%s %s: crypto/tls does not let a client offer one TLS 1.3 suite alone, so it cannot be offered; name a TLS 1.2 suite", fTLSCipher, o.Cipher)
		}
		if cfg.MinVersion == tls.VersionTLS13 {
			return nil, refuse("%s %s is a TLS 1.2 suite; it cannot be offered with TLS 1.3 only", fTLSCipher, o.Cipher)
		}
		cfg.CipherSuites = []uint16{suite.ID}
		cfg.MaxVersion = tls.VersionTLS12
	}
	if (o.Cert == "") != (o.Key == "") {
		return nil, refuse("%s and %s go together", fCert, fKey)
	}
	if o.Cert != "" {
		pair, err := tls.LoadX509KeyPair(o.Cert, o.Key)
		if err != nil {
			return nil, refuse("%s/%s: %v", fCert, fKey, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
