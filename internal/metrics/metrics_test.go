package metrics

import "testing"

func TestMergeAddsAndKeepsMaxima(t *testing.T) {
	var live1, live2 Live
	a, b := NewRecorder(&live1), NewRecorder(&live2)
	a.Success()
	a.Success()
	a.Response(2_000_000)
	a.Response(4_000_000)
	a.Fail(Timeout, 3)
	a.MaxLatenessNs = 7
	a.ProtocolReason = "bad_chunk_size"
	b.Success()
	b.Response(1_000_000)
	b.Fail(Abandoned, 2)
	b.Fail(Protocol, 1)
	b.MaxLatenessNs = 9
	b.ProtocolReason = "obs_fold"
	for range 5 {
		b.SetupStarted()
	}
	b.SetupDone(true, false, 500_000)
	b.SetupDone(false, true, 0)
	b.SetupDone(false, false, 0)
	b.SetupDone(true, false, -1) // TLS: timed once the connection proves itself
	b.SetupRejected()            // a refusal after the client's side of the handshake
	b.SetupDone(false, false, 0)
	b.SetupAbandoned()

	p := NewPhase()
	p.Merge(a)
	p.Merge(b)
	c := p.Counts
	if c.Succeeded != 3 || c.Failed[Timeout] != 3 || c.Failed[Abandoned] != 2 || c.Failed[Protocol] != 1 {
		t.Fatalf("counts %+v", c)
	}
	if c.Attempted != 9 || c.FailedTotal() != 6 {
		t.Fatalf("attempted %d failed %d, want 9 and 6", c.Attempted, c.FailedTotal())
	}
	if p.Latency.TotalCount() != 3 || p.LatencyCount != 3 || p.LatencySumNs != 7_000_000 {
		t.Fatalf("latency count %d/%d sum %d", p.Latency.TotalCount(), p.LatencyCount, p.LatencySumNs)
	}
	if p.MaxLateness != 9 || p.ProtocolReason != "bad_chunk_size" {
		t.Fatalf("max lateness %d, first reason %q", p.MaxLateness, p.ProtocolReason)
	}
	if p.Setups != (Setups{Attempted: 5, Established: 1, Failed: 2, TimedOut: 1, Abandoned: 1}) {
		t.Fatalf("setups %+v", p.Setups)
	}
	if n := p.SetupLatency.TotalCount(); n != 1 {
		t.Fatalf("setup latency count %d: the rejected setup's was recorded", n)
	}
	if live1.Succeeded.Load() != 2 || live2.Failed[Abandoned].Load() != 2 || live2.SetupFailed.Load() != 3 || live2.Established.Load() != 1 {
		t.Fatal("live counters not updated")
	}
}

func TestResetKeepsHistogramsAndLive(t *testing.T) {
	var live Live
	r := NewRecorder(&live)
	h := r.Latency
	r.Success()
	r.Response(1_000)
	r.Reset()
	if r.Latency != h || r.Latency.TotalCount() != 0 || r.Succeeded != 0 {
		t.Fatal("reset did not clear or replaced the histogram")
	}
	r.Success()
	if live.Succeeded.Load() != 2 {
		t.Fatal("live counter lost across reset")
	}
}

func TestRecordingAllocatesNothing(t *testing.T) {
	var live Live
	r := NewRecorder(&live)
	allocs := testing.AllocsPerRun(1000, func() {
		r.Success()
		r.Response(1_234_567)
		r.Fail(Status, 1)
	})
	if allocs != 0 {
		t.Fatalf("%v allocs per record", allocs)
	}
}

func TestCategoryNames(t *testing.T) {
	want := []string{"timeout", "transport", "abandoned", "connect", "connect_timeout", "status", "body", "protocol"}
	for i, c := range Categories() {
		if c.String() != want[i] {
			t.Errorf("category %d is %q, want %q", i, c, want[i])
		}
	}
}

func TestStatusCountsJSON(t *testing.T) {
	var c StatusCounts
	c.Add(200)
	c.Add(200)
	c.Add(404)
	c.Add(999)
	b, err := c.MarshalJSON()
	if err != nil || string(b) != `{"200":2,"404":1,"other":1}` {
		t.Fatalf("%s %v", b, err)
	}
	var back StatusCounts
	if err := back.UnmarshalJSON(b); err != nil || back != c {
		t.Fatalf("round trip: %v", err)
	}
}
