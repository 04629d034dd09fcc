package e2e

import (
	"fmt"
	"sync"
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
				var mu sync.Mutex
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
			target := brk.Target{URL: "http://" + srv.Addr() + "/", HTTP2: true, Body: []byte("a body"), ExpectBody: []byte("ok")}
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
