package brk

import (
	"crypto/tls"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// parseTargetURL parses an http:// or https:// target URL and, for https,
// builds its TLS configuration; TLS options on an http:// URL are refused.
// The TLS configuration is nil for http://.
func parseTargetURL(raw string, opts TLSOptions) (*url.URL, *tls.Config, error) {
	if !strings.Contains(raw, "://") {
		return nil, nil, usage("bad URL %q: no scheme: give http://%s or https://%s", raw, raw, raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, nil, usage("bad URL %q: %v", raw, err)
	}
	var cfg *tls.Config
	switch u.Scheme {
	case "http":
		if opts.set() {
			return nil, nil, usage("TLS options need an https:// URL")
		}
	case "https":
		cfg, err = tlsConfig(opts, u.Hostname())
		if err != nil {
			return nil, nil, err
		}
	default:
		return nil, nil, usage("bad URL %q: the scheme must be http:// or https://", raw)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, nil, usage("bad URL %q: no host", raw)
	}
	if u.User != nil {
		return nil, nil, usage("bad URL %q: credentials in URLs are not supported (use -H Authorization:)", raw)
	}
	if pt := u.Port(); pt != "" {
		if n, err := strconv.ParseUint(pt, 10, 16); err != nil || n == 0 {
			return nil, nil, usage("bad URL %q: port %q is not 1..65535", raw, pt)
		}
	}
	return u, cfg, nil
}

// dialAddress is the host:port text to dial: connect (--connect) when set,
// else the URL's host with the scheme's default port.
func dialAddress(u *url.URL, connect string) (string, error) {
	if connect != "" {
		_, pt, err := net.SplitHostPort(connect)
		if err != nil {
			return "", usage("--connect %q: want HOST:PORT", connect)
		}
		if n, err := strconv.ParseUint(pt, 10, 16); err != nil || n == 0 {
			return "", usage("--connect %q: port %q is not 1..65535", connect, pt)
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
