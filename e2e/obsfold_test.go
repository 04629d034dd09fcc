package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/hostile"
	"github.com/brk-bench/brk/internal/testenv"
)

// obsFoldResponses are valid responses whose X- header fields are
// continued by obsolete line folding (RFC 9112 §5.2): with a space, with a
// tab, over several lines, and with a continuation that looks like a
// framing header but is only text of the X- field's value.
var obsFoldResponses = []string{
	"HTTP/1.1 200 OK\r\nX-Foo: a\r\n  b\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Bar: a\r\n\tb\r\n c\r\nX-Baz: d\r\n e\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nX-Trap: a\r\n Content-Length: 99\r\n Connection: close\r\nContent-Length: 2\r\n\r\nok",
}

// obsFoldScript answers every request with one of obsFoldResponses in
// turn. Every third response is written in two writes cut inside a fold
// line, a moment apart, so that the client parses the fold across reads.
func obsFoldScript() hostile.Script {
	return func(c *hostile.Conn, _ int) {
		for i := 0; ; i++ {
			if _, err := c.ReadRequest(); err != nil {
				return
			}
			resp := []byte(obsFoldResponses[i%len(obsFoldResponses)])
			if i%3 == 2 {
				cut := len("HTTP/1.1 200 OK\r\nX-Trap: a\r\n Content-")
				if err := c.Write(resp[:cut]); err != nil {
					return
				}
				time.Sleep(time.Millisecond)
				resp = resp[cut:]
			}
			if err := c.Respond(resp); err != nil {
				return
			}
		}
	}
}

// TestObsFoldAccepted: a server that folds X- header fields on every
// response is a valid HTTP/1.1 server: the run is Done, every request
// succeeds with the expected body, nothing is a protocol fault, and the
// one connection is kept (the folded "Connection: close" is not an
// option of the Connection field).
func TestObsFoldAccepted(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	srv := hostile.Start(t, obsFoldScript())
	target := brk.Target{URL: "http://" + srv.Addr() + "/", ExpectBody: []byte("ok")}
	plan := brk.Plan{Conns: 1, Start: 4, Max: 4, Phase: 300 * time.Millisecond,
		Timeout: time.Second, Accept: 99.99, Threads: 1}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := brk.Run(ctx, target, plan, nil)
	if err != nil {
		t.Fatalf("brk.Run: %v", err)
	}
	var attempted, succeeded, protocol uint64
	for _, p := range res.Phases {
		attempted += p.Counts.Attempted
		succeeded += p.Counts.Succeeded
		protocol += p.Counts.Protocol
		if p.ProtocolFault != "" {
			t.Errorf("phase %d: protocol fault %q", p.Index, p.ProtocolFault)
		}
		t.Logf("phase %d level %d accepted=%v counts %+v", p.Index, p.Level, p.Accepted, p.Counts)
	}
	if res.Verdict != brk.VerdictDone {
		t.Errorf("verdict %s (%s), want done", res.Verdict, res.Reason)
	}
	if protocol != 0 {
		t.Errorf("%d protocol failures, want 0", protocol)
	}
	if attempted < 3 || succeeded != attempted {
		t.Errorf("attempted %d, succeeded %d: want every request (at least 3) to succeed", attempted, succeeded)
	}
	if st := srv.Stats(); st.Conns != 1 {
		t.Errorf("server saw %d connections, want 1: a folded X- header must not end the connection", st.Conns)
	}
}
