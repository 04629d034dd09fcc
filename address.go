package brk

import (
	"crypto/tls"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// mistypedScheme finds an http or https scheme missing its "://" in
// part ("http//host", "https:/host", "http:host"): the scheme and the rest
// after it.
func mistypedScheme(raw string) (scheme, rest string, ok bool) {
	for _, s := range []string{"https", "http"} {
		if after, found := strings.CutPrefix(raw, s); found && after != "" && (after[0] == ':' || after[0] == '/') {
			if rest = strings.TrimLeft(after, ":/"); rest != "" {
				return s, rest, true
			}
		}
	}
	return "", "", false
}

// parseTargetURL parses an http:// or https:// target URL and, for https,
// builds its TLS configuration; TLS options on an http:// URL are refused.
// The TLS configuration is nil for http://.
func parseTargetURL(raw string, opts TLSOptions) (*url.URL, *tls.Config, error) {
	if !strings.Contains(raw, "://") {
		if scheme, rest, ok := mistypedScheme(raw); ok {
			return nil, nil, refuse("%s %q: a mistyped scheme: give %s://%s", fURL, raw, scheme, rest)
		}
		return nil, nil, refuse("%s %q: no scheme: give http://%s or https://%s", fURL, raw, raw, raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, nil, refuse("%s %q: %v", fURL, raw, err)
	}
	var cfg *tls.Config
	switch u.Scheme {
	case "http":
		if opts.set() {
			return nil, nil, refuse("%s options need an https:// URL", fTLS)
		}
	case "https":
		cfg, err = tlsConfig(opts, u.Hostname())
		if err != nil {
			return nil, nil, err
		}
	default:
		return nil, nil, refuse("%s %q: the scheme must be http:// or https://", fURL, raw)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, nil, refuse("%s %q: no host", fURL, raw)
	}
	if u.User != nil { // its password never shown
		return nil, nil, refuse("%s %q: credentials in URLs are not supported (use %s Authorization:)", fURL, u.Redacted(), fHeaders)
	}
	if pt := u.Port(); pt != "" {
		if n, err := strconv.ParseUint(pt, 10, 16); err != nil || n == 0 {
			return nil, nil, refuse("%s %q: port %q is not 1..65535", fURL, raw, pt)
		}
	}
	return u, cfg, nil
}

// dialAddress is the host:port text to dial: connect (Target.Connect) when set,
// else the URL's host with the scheme's default port.
func dialAddress(u *url.URL, connect string) (string, error) {
	if connect != "" {
		_, pt, err := net.SplitHostPort(connect)
		if err != nil {
			return "", refuse("%s %q: want HOST:PORT", fConnect, connect)
		}
		if n, err := strconv.ParseUint(pt, 10, 16); err != nil || n == 0 {
			return "", refuse("%s %q: port %q is not 1..65535", fConnect, connect, pt)
		}
		return connect, nil
	}
	if u.Port() != "" {
		return u.Host, nil
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}
