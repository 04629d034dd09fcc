package shard

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/testenv"
)

// frameProxy relays one shard's connection to the coordinator frame by
// frame; fault sees each frame (dir "up": shard → coordinator, "down":
// coordinator → shard, n counting that direction's frames from 0, the
// handshake's included) and returns the frames to pass on in its place.
type frameProxy struct {
	ln    net.Listener
	to    string
	fault func(dir string, n int, f []byte) [][]byte
	mu    sync.Mutex
}

func startProxy(t *testing.T, to string, fault func(dir string, n int, f []byte) [][]byte) *frameProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &frameProxy{ln: ln, to: to, fault: fault}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", to)
			if err != nil {
				c.Close()
				continue
			}
			go p.pump("up", c, s)
			go p.pump("down", s, c)
		}
	}()
	return p
}

func (p *frameProxy) pump(dir string, from, to net.Conn) {
	defer from.Close()
	defer to.Close()
	for n := 0; ; n++ {
		var hdr [4]byte
		if _, err := io.ReadFull(from, hdr[:]); err != nil {
			return
		}
		f := make([]byte, 4+binary.BigEndian.Uint32(hdr[:]))
		copy(f, hdr[:])
		if _, err := io.ReadFull(from, f[4:]); err != nil {
			return
		}
		p.mu.Lock()
		out := p.fault(dir, n, f)
		p.mu.Unlock()
		for _, g := range out {
			if _, err := to.Write(g); err != nil {
				return
			}
		}
	}
}

func (r *shardRun) reason() string {
	if r.err != nil {
		return r.err.Error()
	}
	return r.out.Reason
}

// TestForgedFrames: a proxy between shard 1 and the coordinator flips a
// byte of one frame (either way), replays a frame or reorders two; each
// ends the run inconclusive on both shards, naming shard 1, and the
// proxy that passes every frame untouched changes nothing.
func TestForgedFrames(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	flip := func(f []byte) []byte { g := append([]byte{}, f...); g[4+8+3] ^= 0x20; return g }
	var held []byte
	for _, c := range []struct {
		name       string
		fault      func(dir string, n int, f []byte) [][]byte
		coord, sh1 string // in the reasons
	}{
		{"untouched", func(_ string, _ int, f []byte) [][]byte { return [][]byte{f} }, "", ""},
		{"flip up", func(dir string, n int, f []byte) [][]byte {
			if dir == "up" && n == 1 { // shard 1's report of phase 0
				return [][]byte{flip(f)}
			}
			return [][]byte{f}
		}, "frame 0 from shard 1 failed authentication", "frame 0 from shard 1 failed authentication"},
		{"flip down", func(dir string, n int, f []byte) [][]byte {
			if dir == "down" && n == 3 { // the result of phase 0
				return [][]byte{flip(f)}
			}
			return [][]byte{f}
		}, "shard 1 stopped: shard 1: frame 2 from the coordinator failed authentication", "shard 1: frame 2 from the coordinator failed authentication"},
		{"replay", func(dir string, n int, f []byte) [][]byte {
			if dir == "up" && n == 1 {
				return [][]byte{f, f}
			}
			return [][]byte{f}
		}, "a frame from shard 1 is out of sequence (number 0, expected 1): replayed", "from shard 1 is out of sequence"},
		{"reorder", func(dir string, n int, f []byte) [][]byte {
			switch {
			case dir == "down" && n == 1: // the welcome: held back
				held = f
				return nil
			case dir == "down" && n == 2: // the start: passed first
				return [][]byte{f, held}
			}
			return [][]byte{f}
		}, "shard 1 was lost", "shard 1: a frame from the coordinator is out of sequence (number 1, expected 0): replayed or reordered"},
	} {
		t.Run(c.name, func(t *testing.T) {
			runs := runShards(t, 2, func(i int, cfg *Config, _ *fakeLocal) {
				if i == 1 {
					cfg.Addr = startProxy(t, cfg.Addr, c.fault).ln.Addr().String()
				}
			})
			for i, want := range []string{c.coord, c.sh1} {
				r := runs[i]
				switch {
				case want == "" && (r.err != nil || r.out.Verdict != judge.Done):
					t.Errorf("shard %d: %v %+v, want done", i, r.err, r.out)
				case want != "" && (r.err == nil && r.out.Verdict != judge.Inconclusive || !strings.Contains(r.reason(), want)):
					t.Errorf("shard %d: %q, want inconclusive with %q", i, r.reason(), want)
				default:
					t.Logf("shard %d: %s", i, r.reason())
				}
			}
		})
	}
}

// TestFreeShard: a shard without a coordinator (no Addr) runs every phase
// of an unjudged plan on its boundaries from StartAt, even phases the
// verdict code would reject (here every phase fails its requests), and
// returns its own measurements; one that starts past StartAt + tolerance
// fails closed.
func TestFreeShard(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	plan := testPlan(t, 2)
	plan.Unjudged = true
	failing := &fakeLocal{}
	cfg := Config{Spec: Spec{Index: 1, Count: 2}, Token: "s3cret", PlanHash: "plan-1", StartAt: time.UnixMilli(time.Now().Add(200 * time.Millisecond).UnixMilli()),
		Tolerance: 200 * time.Millisecond, Allowance: 100 * time.Millisecond, Plan: plan,
		Local: phaserFunc(func(ctx context.Context, spec judge.PhaseSpec) (*judge.Measurement, error) {
			m, err := failing.RunPhase(ctx, spec)
			m.Stats.Counts.Failed[0] = 5 // a server verdict, were it judged
			m.Stats.Counts.Attempted += 5
			return m, err
		})}
	ph, err := Join(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ph.Close()
	out := judge.NewRamp(ph, plan, nopObserver{}).Run(context.Background())
	if out.Verdict != judge.Done || len(out.Phases) != 3 {
		t.Fatalf("free shard: %v %q after %d phases", out.Verdict, out.Reason, len(out.Phases))
	}
	for i, j := range out.Phases {
		if j.Judged || j.Reason != judge.NotJudged {
			t.Errorf("phase %d judged: %+v", i, j.Judgement)
		}
		if at := cfg.StartAt.Add(time.Duration(i) * 200 * time.Millisecond); failing.starts[i].Before(at) {
			t.Errorf("phase %d started %s before its boundary", i, at.Sub(failing.starts[i]))
		}
	}
	cfg.StartAt = time.Now().Add(-time.Second)
	late, err := Join(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	if out := judge.NewRamp(late, plan, nopObserver{}).Run(context.Background()); out.Verdict != judge.Inconclusive || !strings.Contains(out.Reason, "shard 1 started phase 0") {
		t.Errorf("late free shard: %v %q", out.Verdict, out.Reason)
	}
	cfg.StartAt = time.Time{}
	if _, err := Join(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "Config.StartAt") || strings.Contains(err.Error(), "--") {
		t.Errorf("a free shard without a start: %v", err)
	}
}

type phaserFunc func(context.Context, judge.PhaseSpec) (*judge.Measurement, error)

func (f phaserFunc) RunPhase(ctx context.Context, s judge.PhaseSpec) (*judge.Measurement, error) {
	return f(ctx, s)
}

// TestReplayedHelloRefused: shard 1's hello, recorded in one run and
// replayed in place of its hello in the next, is refused as a replay,
// not as a token that differs (issue 29 item 8): the token is the same.
func TestReplayedHelloRefused(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	var hello []byte
	record := func(dir string, n int, f []byte) [][]byte {
		if dir == "up" && n == 0 && hello == nil {
			hello = append([]byte{}, f...)
		}
		return [][]byte{f}
	}
	if runs := runShards(t, 2, func(i int, cfg *Config, _ *fakeLocal) {
		if i == 1 {
			cfg.Addr = startProxy(t, cfg.Addr, record).ln.Addr().String()
		}
	}); runs[1].err != nil || hello == nil {
		t.Fatalf("the recorded run: %v (hello recorded: %v)", runs[1].err, hello != nil)
	}
	replay := func(dir string, n int, f []byte) [][]byte {
		if dir == "up" && n == 0 {
			return [][]byte{hello}
		}
		return [][]byte{f}
	}
	runs := runShards(t, 2, func(i int, cfg *Config, _ *fakeLocal) {
		if i == 1 {
			cfg.Addr = startProxy(t, cfg.Addr, replay).ln.Addr().String()
			cfg.JoinTimeout = time.Second
		}
		if i == 0 {
			cfg.JoinTimeout = time.Second
		}
	})
	err := runs[1].err
	if err == nil || !strings.Contains(err.Error(), "replayed hello") || strings.Contains(err.Error(), "BRK_TOKEN") {
		t.Fatalf("shard 1 with a replayed hello: %v; want a refusal naming the replay", err)
	}
	t.Log(err)
}
