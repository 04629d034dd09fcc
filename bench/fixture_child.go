package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/brk-bench/brk/bench/contract"
)

// builtinRoutes are the fixture's routes that answer a fixed status and
// body, which is what a contract route can ask for.
var builtinRoutes = map[string]string{
	"/plain": "ok",
	"/hello": "Hello, World!",
}

// ServeChild is `brk fixture --child`: the built-in implementation of the
// fixture contract (package contract). It runs the same responder as
// `brk fixture` (StartFixture), with GOMAXPROCS set to the configured
// threads, and drains on stop or EOF of in.
//
// It serves h1 and h2c on plain connections and h2 (or HTTP/1.1) over TLS
// (h2-tls), and routes among /plain ("ok") and /hello
// with status 200 and one delay for all of them (the fixture's service
// time).
func ServeChild(in io.Reader, out io.Writer) error {
	return contract.Serve(in, out, startChild)
}

func startChild(cfg contract.Config) (*contract.Started, error) {
	if err := CheckProtocols([]string{cfg.Protocol}); err != nil {
		return nil, err
	}
	if cfg.Protocol == "h2-tls" && !cfg.TLS || cfg.Protocol != "h2-tls" && cfg.TLS {
		return nil, fmt.Errorf("protocol %s with tls %v: h2-tls is the TLS one", cfg.Protocol, cfg.TLS)
	}
	var delay time.Duration
	for i, r := range cfg.Routes {
		body, ok := builtinRoutes[r.Path]
		if !ok || r.Status != 200 || r.Body != body {
			return nil, fmt.Errorf("the built-in fixture does not serve route %s %d %q", r.Path, r.Status, r.Body)
		}
		if r.DelayUs < 0 || i > 0 && r.Delay() != delay {
			return nil, fmt.Errorf("the built-in fixture needs one delay >= 0 for all its routes")
		}
		delay = r.Delay()
	}
	f, err := StartFixture(FixtureConfig{Addr: cfg.Listen, TLS: cfg.TLS, Service: delay})
	if err != nil {
		return nil, err
	}
	return &contract.Started{
		Addr:           f.Addr(),
		Implementation: "brk fixture (net/http " + runtime.Version() + ")",
		CertPEM:        string(f.CertPEM()),
		Drain: func(ctx context.Context) error {
			err := f.srv.Shutdown(ctx) // stops accepting, waits for requests in progress
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return err
		},
	}, nil
}
