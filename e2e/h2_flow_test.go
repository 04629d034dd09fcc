package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/hostile"
)

// A server whose stream windows are 0, each opened 50 ms after the
// stream's HEADERS: POST streams are outstanding from their HEADERS, so the
// phase is judged alike at depth 1 and 2 (accepted, the target covered
// while the bodies waited), where it was accepted with 0 % coverage at
// depth 1 and unfulfilled at depth 2 when a stream counted only once its
// body was out and bodies went one at a time.
func TestH2FlowControlledPostsJudgedAlike(t *testing.T) {
	for _, d := range []int{1, 2} {
		t.Run(fmt.Sprintf("depth=%d", d), func(t *testing.T) {
			var st hostile.H2Stats
			srv := hostile.Start(t, func(c *hostile.Conn, _ int) {
				h, err := hostile.NewH2(c, &st, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
				if err != nil {
					return
				}
				h.Opens = true
				mu := &h.Mu // window updates from timers, as Next reads
				for {
					ev, err := h.Next()
					if err != nil {
						return
					}
					switch ev.Kind {
					case hostile.H2Open:
						go func(id uint32) {
							time.Sleep(50 * time.Millisecond)
							mu.Lock()
							defer mu.Unlock()
							h.Fr.WriteWindowUpdate(id, 65535)
						}(ev.Stream)
					case hostile.H2Request:
						mu.Lock()
						err := h.Respond(ev.Stream, 200, "ok")
						mu.Unlock()
						if err != nil {
							return
						}
					}
				}
			})
			target := brk.Target{URL: "http://" + srv.Addr() + "/", Protocol: brk.HTTP2, Body: []byte("a body"), ExpectBody: []byte("ok")}
			res := runBrk(t, target, h2Plan(2, d, 300*time.Millisecond, time.Second))
			checkAccounting(t, res)
			p := res.Phases[0]
			t.Logf("%s; coverage %.3g %%, reached once %d", describe(res), p.TargetCoveragePct, p.TargetReachedOnce)
			if res.Verdict != brk.VerdictDone || p.TargetReachedOnce != 2 || p.TargetCoveragePct < 10 {
				t.Fatalf("verdict %s (%s), coverage %.3g %%, reached once %d: want accepted with the streams outstanding from their HEADERS",
					res.Verdict, res.Reason, p.TargetCoveragePct, p.TargetReachedOnce)
			}
		})
	}
}

// A Go server with 64 KiB flow-control windows (node's default) and
// 1 MiB POST bodies at 5 streams per connection: the windows let one body
// through at a time, but every stream is outstanding from its HEADERS, so
// the level is held and the phase is judged on the server's answers. It
// was "target unfulfilled: … never held 5 requests outstanding", naming
// nothing, when a stream counted only once its body was out.
func TestH2SmallWindowsHoldTheLevel(t *testing.T) {
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write([]byte("ok"))
	}))
	s.Config.Protocols = new(http.Protocols)
	s.Config.Protocols.SetUnencryptedHTTP2(true)
	s.Config.HTTP2 = &http.HTTP2Config{MaxReceiveBufferPerConnection: 65535, MaxReceiveBufferPerStream: 65535}
	s.Start()
	defer s.Close()
	target := brk.Target{URL: s.URL + "/", Protocol: brk.HTTP2, Body: bytes.Repeat([]byte("b"), 1<<20), ExpectBody: []byte("ok")}
	res := runBrk(t, target, h2Plan(2, 5, 500*time.Millisecond, 5*time.Second))
	checkAccounting(t, res)
	p := res.Phases[0]
	t.Logf("%s; coverage %.3g %%, reached once %d", describe(res), p.TargetCoveragePct, p.TargetReachedOnce)
	if res.Verdict != brk.VerdictDone || p.TargetReachedOnce != 2 {
		t.Fatalf("verdict %s (%s), reached once %d: want the level held, every stream outstanding from its HEADERS", res.Verdict, res.Reason, p.TargetReachedOnce)
	}
}
