package brk

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/judge"
)

// randomDuration is a duration of any nanosecond count up to about 11
// days, or 0 (an unset limit or budget).
func randomDuration(rng *rand.Rand) time.Duration {
	switch rng.IntN(4) {
	case 0:
		return 0
	case 1:
		return time.Duration(rng.IntN(1000)) * time.Millisecond
	}
	return time.Duration(rng.Int64N(1e15))
}

// randomRun is a report of a random plan in test m, recorded as a run
// records it (recordPlan, the mode's report, shardPlanOf), sharded or not.
func randomRun(rng *rand.Rand, m Mode, search, sharded bool) *Result {
	accepts := []float64{AcceptAny, DefaultAccept, 99.5, 50, 0.001, 100}
	p := Plan{Conns: 1 + rng.IntN(5000), Start: 1 + rng.IntN(1e6), Max: rng.IntN(1e6), Threads: rng.IntN(64),
		Phase: randomDuration(rng) + time.Millisecond, Timeout: randomDuration(rng) + time.Millisecond,
		MaxP99: randomDuration(rng), MaxP999: randomDuration(rng), Budget: randomDuration(rng),
		Accept: accepts[rng.IntN(len(accepts))], Refine: rng.IntN(2) == 0, Repeat: rng.IntN(4),
		Requests: 1 + rng.IntN(10), KeepAlive: rng.IntN(2) == 0, RateDepth: 1 + rng.IntN(128),
		Arrivals: []string{"uniform", "poisson"}[rng.IntN(2)], Seed: rng.Uint64N(MaxSeed) + 1}
	if search {
		p.Search = &Search{Growth: 1 + rng.Float64()*10, Resolution: rng.IntN(3) * rng.IntN(100)}
		if p.Search.Resolution == 0 {
			p.Search.ResolutionPct = rng.Float64() * 100
		}
	} else {
		p.Pace = 1 + rng.IntN(1000)
	}
	acc, err := acceptFraction(p.Accept)
	if err != nil {
		panic(err)
	}
	protocol := []string{"http/1.1", "h2"}[rng.IntN(2)]
	res := &Result{Schema: 1, Test: m, URL: "http://127.0.0.1:1/", Protocol: protocol, Conns: p.Conns,
		TimeoutMs: ms(p.Timeout), Accept: acc.String(), Phases: []*PhaseStats{}}
	res.Plan = recordPlan(p, m, protocol, acc, 1+rng.IntN(64))
	loadOf(m).report(res, p)
	res.Plan.RateDepth, res.Plan.Arrivals, res.Plan.Seed = res.RateDepth, res.Arrivals, res.Seed
	if sharded {
		s := &Sharding{Index: rng.IntN(3), Count: 3, Allowance: randomDuration(rng)}
		splan := judge.Plan{Addr: "127.0.0.1:8080"}
		res.Shard = &ShardInfo{Index: s.Index, Count: s.Count, TargetHash: "t", Plan: shardPlanOf(s, p, splan),
			Unjudged: rng.IntN(2) == 0}
		res.Shard.PlanHash = reportPlanHash("t", res, s.Count, res.Shard.Plan)
	}
	return res
}

// A report's plan and shard plan survive JSON exactly: marshal, unmarshal
// and marshal again give the same bytes, the same Plan values and the
// same plan hash, in every test, linear and search, sharded and not, over
// random plans (durations of any nanosecond count).
func TestPlanJSONRoundTrip(t *testing.T) {
	t.Parallel() // counts and plans, timing nothing
	rng := rand.New(rand.NewPCG(19, 2))
	for _, m := range []Mode{ModeRequests, ModeConnections, ModeRate} {
		for _, search := range []bool{false, true} {
			for _, sharded := range []bool{false, true} {
				for range 300 {
					res := randomRun(rng, m, search, sharded)
					b1, err := json.Marshal(res)
					if err != nil {
						t.Fatal(err)
					}
					var back Result
					if err := json.Unmarshal(b1, &back); err != nil {
						t.Fatalf("%s: %v", b1, err)
					}
					b2, err := json.Marshal(&back)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(b1, b2) {
						t.Fatalf("%s search %v sharded %v: bytes changed\n%s\n%s", m, search, sharded, b1, b2)
					}
					if !reflect.DeepEqual(back.Plan, res.Plan) {
						t.Fatalf("plan read back %+v, want %+v", back.Plan, res.Plan)
					}
					if back.Plan.Mode() != m || back.Plan.Protocol() != res.Protocol {
						t.Fatalf("plan read back of test %q protocol %q, want %q %q", back.Plan.Mode(), back.Plan.Protocol(), m, res.Protocol)
					}
					if !sharded {
						continue
					}
					if !reflect.DeepEqual(back.Shard.Plan, res.Shard.Plan) {
						t.Fatalf("shard plan read back %+v, want %+v", back.Shard.Plan, res.Shard.Plan)
					}
					if h := reportPlanHash("t", &back, back.Shard.Count, back.Shard.Plan); h != res.Shard.PlanHash {
						t.Fatalf("plan hash read back %s, want %s\n%s", h, res.Shard.PlanHash, b1)
					}
				}
			}
		}
	}
}

// A plan written by the form (its durations from ms and seconds) reads
// back rounded to the nanosecond, and a duration beyond time.Duration's
// range is refused.
func TestPlanJSONDurations(t *testing.T) {
	var p Plan
	if err := json.Unmarshal([]byte(`{"phase_s":1.000000001,"timeout_ms":0.000001,"max_p99_ms":2.5}`), &p); err != nil {
		t.Fatal(err)
	}
	if p.Phase != time.Second+1 || p.Timeout != 1 || p.MaxP99 != 2500*time.Microsecond {
		t.Fatalf("read %v %v %v", p.Phase, p.Timeout, p.MaxP99)
	}
	if p.Accept != AcceptAny || p.Search != nil {
		t.Fatalf("accept_pct absent read as %v, search %v", p.Accept, p.Search)
	}
	for _, doc := range []string{`{"phase_s":1e10}`, `{"timeout_ms":-1e300}`} {
		if err := json.Unmarshal([]byte(doc), &p); err == nil {
			t.Errorf("%s: read as %v %v", doc, p.Phase, p.Timeout)
		}
	}
	keep := Plan{Conns: 3}
	if err := json.Unmarshal([]byte(`null`), &keep); err != nil || keep.Conns != 3 {
		t.Errorf("null read into a plan: %v, %+v", err, keep)
	}
	var s ShardInfo
	if err := json.Unmarshal([]byte(`{"plan":{"phase_ms":1e20}}`), &s); err == nil {
		t.Errorf("shard plan phase_ms 1e20 read as %v", s.Plan.Phase)
	}
}
