package e2e

import (
	"bytes"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/hostile"
	"github.com/brk-bench/brk/internal/testenv"
)

// tooLarge is what a server answers to an upload it refuses before
// reading it (RFC 9112 allows a response before the request is complete).
const tooLarge = "HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"

// refuseUploads reads each request's head only, answers 413 at once and
// closes, with most of the body still unread (so the close is an RST).
// linger, when set, reads the rest for a while first, as nginx does.
func refuseUploads(linger bool, refused *atomic.Int64) hostile.Script {
	return func(c *hostile.Conn, _ int) {
		raw := c.Raw()
		raw.SetReadDeadline(time.Now().Add(5 * time.Second))
		var head []byte
		buf := make([]byte, 4096)
		for !bytes.Contains(head, []byte("\r\n\r\n")) {
			n, err := raw.Read(buf)
			if err != nil {
				return
			}
			head = append(head, buf[:n]...)
		}
		if err := c.Write([]byte(tooLarge)); err != nil {
			return
		}
		refused.Add(1)
		if linger {
			c.CloseWrite()
			raw.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			c.Discard()
		}
	}
}

// TestEarlyResponseToLargeUpload: a server that refuses a several-MiB
// upload before reading it answers the request being written. That
// response is the request's outcome (a success with --expect-status 413,
// a status failure without), never a protocol fault, and the connection's
// close is handled as any Connection: close.
func TestEarlyResponseToLargeUpload(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	body := bytes.Repeat([]byte("x"), 8<<20)
	for _, c := range []struct {
		name   string
		linger bool
		expect []int
	}{
		{"413 expected, abrupt close", false, []int{413}},
		{"413 expected, lingering close", true, []int{413}},
		{"413 not expected", true, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var refused atomic.Int64
			srv := hostile.Start(t, refuseUploads(c.linger, &refused))
			target := hostileTarget(srv)
			target.Body = body
			target.ExpectStatus = c.expect
			res := runBrk(t, target, shortPlan(2, 1, 400*time.Millisecond))
			t.Log(describe(res))
			checkAccounting(t, res)
			tc := total(res)
			if tc.Protocol != 0 || tc.Transport != 0 {
				t.Fatalf("an early response was counted as a fault: %+v (%s)", tc, protocolFault(res))
			}
			if tc.Attempted == 0 {
				t.Fatal("no request attempted")
			}
			if c.expect != nil {
				if res.Verdict != brk.VerdictDone || tc.Succeeded != tc.Attempted {
					t.Fatalf("verdict %s, counts %+v: want every 413 a success", res.Verdict, tc)
				}
			} else if res.Verdict != brk.VerdictInconclusive || tc.Status != tc.Attempted || !strings.Contains(res.Reason, "every response was 413") {
				// Every response the same refusal: the user's mistake
				// (a body too large), not a break.
				t.Fatalf("verdict %s (%s), counts %+v: want every 413 a status failure, the run inconclusive naming it", res.Verdict, res.Reason, tc)
			}
			// Every outcome is a response the server sent (the server counts
			// one after its write returned: let the last ones land).
			want := tc.Attempted - tc.Abandoned - tc.Timeout
			deadline := time.Now().Add(time.Second)
			for uint64(refused.Load()) < want && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if got := uint64(refused.Load()); got < want {
				t.Fatalf("server answered %d, client counted %d responses", got, want)
			}
		})
	}
}
