// Command fixture-nethttp is a downstream responder for `brk bench
// --fixture-bin`: net/http's default server (http.DefaultServeMux behind a
// plain http.Server) speaking the fixture contract of package
// brk/bench/contract. It serves the configured routes over HTTP/1.1 and
// refuses any other protocol or TLS.
//
//	go build -o /tmp/fixture-nethttp ./examples/fixture-nethttp
//	brk bench --fixture-bin /tmp/fixture-nethttp --depths 1,8 --phase 2s
package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/brk-bench/brk/bench/contract"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("fixture-nethttp: ")
	// Stdout is the contract's; diagnostics go to stderr only.
	if err := contract.Serve(os.Stdin, os.Stdout, start); err != nil {
		log.Print(err)
		os.Exit(1)
	}
}

func start(cfg contract.Config) (*contract.Started, error) {
	if cfg.Protocol != "h1" || cfg.TLS {
		return nil, fmt.Errorf("serves h1 without TLS only, not %s (tls %v)", cfg.Protocol, cfg.TLS)
	}
	for _, r := range cfg.Routes {
		body, status, delay := r.Body, r.Status, r.Delay()
		http.HandleFunc(r.Path, func(w http.ResponseWriter, req *http.Request) {
			if delay > 0 {
				select {
				case <-time.After(delay):
				case <-req.Context().Done():
					return
				}
			}
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(status)
			w.Write([]byte(body))
		})
	}
	listen := cfg.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{} // the default: http.DefaultServeMux
	go srv.Serve(ln)
	return &contract.Started{
		Addr:           ln.Addr().String(),
		Implementation: "fixture-nethttp (net/http default server " + runtime.Version() + ")",
		Drain: func(ctx context.Context) error {
			return srv.Shutdown(ctx)
		},
	}, nil
}
