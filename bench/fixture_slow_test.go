package bench

import (
	"net/http"
	"testing"
	"time"
)

// A slow route among fast ones: /delay?ms=N sleeps after its capacity
// slot, not in it, so with Capacity 1 a request in its delay leaves the
// slot to the fast requests behind it: they take about one service time
// each while the slow one is still out, and the slow one takes its
// service time plus N. Over HTTP/2 they share the slow one's connection
// (streams do not wait behind each other).
func TestSlowRouteAmongFast(t *testing.T) {
	const service, delay = 10 * time.Millisecond, 400 * time.Millisecond
	f := startFixture(t, FixtureConfig{Capacity: 1, Service: service})
	for _, h2 := range []bool{false, true} {
		name := "http/1.1"
		tr := &http.Transport{MaxIdleConnsPerHost: 64}
		if h2 {
			name = "h2c"
			var p http.Protocols
			p.SetUnencryptedHTTP2(true)
			tr.Protocols = &p
		}
		t.Run(name, func(t *testing.T) {
			t.Cleanup(tr.CloseIdleConnections)
			c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
			ctx := testCtx(t)
			before := f.Requests()
			slow := make(chan time.Duration, 1)
			start := time.Now()
			go func() {
				r := do(t, c, ctx, "GET", f.URL("/delay?ms=400"), nil)
				if r.code != 200 {
					t.Errorf("/delay?ms=400: %d", r.code)
				}
				if h2 && r.resp.ProtoMajor != 2 {
					t.Errorf("/delay over %s", r.resp.Proto)
				}
				slow <- time.Since(start)
			}()
			for f.Requests() == before {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(3 * service) // the slow request is past its slot, in its delay
			fast := time.Now()
			for range 5 {
				if r := do(t, c, ctx, "GET", f.URL("/plain"), nil); r.code != 200 || (h2 && r.resp.ProtoMajor != 2) {
					t.Fatalf("/plain: %d over %s", r.code, r.resp.Proto)
				}
			}
			fastTook := time.Since(fast)
			select {
			case d := <-slow:
				t.Fatalf("the slow request ended (after %v) before the fast ones (%v): they waited behind it", d, fastTook)
			default:
			}
			// 5 × 10 ms of service; a slot held by the delay would make it 400 ms.
			if fastTook > delay/2 {
				t.Errorf("5 fast requests took %v with a slow one in its delay: the delay holds the slot", fastTook)
			}
			if d := <-slow; d < service+delay || d > service+delay+time.Second {
				t.Errorf("the slow request took %v, want its service time plus its delay (%v)", d, service+delay)
			}
		})
	}
}
