package bench

import (
	"fmt"
	"strings"

	"github.com/brk-bench/brk"
)

// Protocols are the protocols a bench matrix can name, in the order they
// are listed: "h1" (HTTP/1.1), "h2c" (HTTP/2 with prior knowledge) and
// "h2-tls" (HTTP/2 over TLS).
var Protocols = []string{"h1", "h2c", "h2-tls"}

// clientProtocol is the protocol brk speaks to a fixture serving each of
// Protocols (h2-tls over TLS by its https:// URL).
var clientProtocol = map[string]brk.Protocol{"h1": brk.HTTP1, "h2c": brk.HTTP2, "h2-tls": brk.HTTP2}

// protocolBuilt reports whether this build can benchmark protocol p: the
// one switch for a protocol that is not built.
func protocolBuilt(p string) bool {
	return p == "h1" || p == "h2c" || p == "h2-tls"
}

// CheckProtocols refuses an unknown protocol and one this build lacks,
// with one line naming it; `brk bench` exits 2 with it.
func CheckProtocols(ps []string) error {
	if len(ps) == 0 {
		return fmt.Errorf("no protocol: want one or more of %s", strings.Join(Protocols, ","))
	}
	seen := map[string]bool{}
	for _, p := range ps {
		known := false
		for _, q := range Protocols {
			known = known || p == q
		}
		switch {
		case !known:
			return fmt.Errorf("unknown protocol %q: want one or more of %s", p, strings.Join(Protocols, ","))
		case !protocolBuilt(p):
			return fmt.Errorf("protocol %s is not in this build", p)
		case seen[p]:
			return fmt.Errorf("protocol %s is named twice", p)
		}
		seen[p] = true
	}
	return nil
}
