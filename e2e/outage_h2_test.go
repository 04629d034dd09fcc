package e2e

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/brk-bench/brk"
)

// restartable is a Go net/http server (HTTP/1.1 and h2c, or HTTP/1.1 and
// h2 over TLS) on a fixed address that can be stopped and started again.
type restartable struct {
	t    *testing.T
	addr string
	tls  bool
	srv  *httptest.Server
}

func (r *restartable) start() {
	r.t.Helper()
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		r.t.Fatalf("restart on %s: %v", r.addr, err)
	}
	r.addr = ln.Addr().String()
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok"))
	}))
	s.Listener.Close()
	s.Listener = ln
	s.Config.Protocols = new(http.Protocols)
	s.Config.Protocols.SetHTTP1(true)
	s.Config.Protocols.SetHTTP2(true)
	s.Config.Protocols.SetUnencryptedHTTP2(true)
	if r.tls {
		s.EnableHTTP2 = true
		s.StartTLS()
	} else {
		s.Start()
	}
	r.srv = s
}

func (r *restartable) stop() { r.srv.CloseClientConnections(); r.srv.Close() }

// An outage — the server killed 0.5 s into a 1.5 s phase and restarted
// 0.5 s later — rejects the phase over HTTP/2 as over HTTP/1.1: each
// failed setup counts its connection's logical first request as connect
// (an HTTP/2 connection opens no stream before the peer's SETTINGS, so
// without it the failed setups counted nothing and the phase passed).
func TestOutageRejectsOverEveryProtocol(t *testing.T) {
	for _, c := range []struct {
		name  string
		http2 bool
		tls   bool
	}{{"h1", false, false}, {"h2c", true, false}, {"h2-tls", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			r := &restartable{t: t, addr: "127.0.0.1:0", tls: c.tls}
			r.start()
			defer func() { r.stop() }()
			scheme := "http://"
			if c.tls {
				scheme = "https://"
			}
			target := brk.Target{URL: scheme + r.addr + "/", Protocol: protocolOf(c.http2), ExpectBody: []byte("ok"), TLS: brk.TLSOptions{Insecure: c.tls}}
			plan := brk.Plan{Conns: 4, Start: 1, Max: 1, Phase: 1500 * time.Millisecond, Timeout: time.Second, Accept: 99.9, Threads: 1}
			outage := make(chan struct{})
			go func() {
				defer close(outage)
				time.Sleep(500 * time.Millisecond)
				r.stop()
				time.Sleep(500 * time.Millisecond)
				r.start()
			}()
			res := runBrk(t, target, plan)
			<-outage
			checkAccounting(t, res)
			tc, su := total(res), totalSetups(res)
			t.Logf("%s", describe(res))
			if su.Failed+su.TimedOut == 0 {
				t.Fatalf("no setup failed during the outage (setups %+v)", su)
			}
			if res.Verdict != brk.VerdictBroken || tc.Connect+tc.ConnectTimeout != su.Failed+su.TimedOut {
				t.Fatalf("verdict %s, %d connect + %d connect_timeout failures for %d failed and %d timed-out setups: want the phase rejected, one failure per failed setup",
					res.Verdict, tc.Connect, tc.ConnectTimeout, su.Failed, su.TimedOut)
			}
		})
	}
}
