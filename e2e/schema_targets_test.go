package e2e

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/internal/testenv"
)

// TestSchemaTargets: a report whose phases carry a request mix's targets
// (every field of brk.TargetStats) matches the schema; a target lacking a
// field, with a field the schema does not know, or with an impossible
// value does not. The report is a real run's, its phases given targets by
// hand (the engine's own targets are checked in mix_slow_test.go).
func TestSchemaTargets(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	s := compileSchema(t)
	fx, err := bench.StartFixture(bench.FixtureConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer fx.Close()
	r := runBrk(t, brk.Target{URL: fx.URL("/plain")}, brk.Plan{Conns: 2, Start: 1, Pace: 1, Max: 2, Phase: 200 * time.Millisecond, Threads: 1})
	if len(r.Phases) == 0 {
		t.Fatalf("no phases: %s", describe(r))
	}
	for _, p := range r.Phases {
		// The phase's requests as the first target; a second that was
		// sent nothing.
		p.Targets = []brk.TargetStats{
			{Index: 0, Method: "GET", URL: fx.URL("/plain"), Weight: 3, Counts: p.Counts, StatusCodes: p.StatusCodes,
				SuccessPct: p.SuccessPct, LatencyMs: p.LatencyMs, LatencyHdr: p.LatencyHdr},
			{Index: 1, Method: "POST", URL: fx.URL("/echo"), Weight: 1, StatusCodes: map[string]uint64{}, SuccessPct: 87.5},
		}
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	validate := func(raw []byte) error {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		return s.Validate(doc)
	}
	if err := validate(raw); err != nil {
		t.Fatalf("a report with targets does not match the schema: %v\n%s", err, raw)
	}
	// Every field of TargetStats is in the JSON and required by the schema.
	var generic map[string]any
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	target := generic["phases"].([]any)[0].(map[string]any)["targets"].([]any)[0].(map[string]any)
	for _, field := range []string{"index", "method", "url", "weight", "counts", "status_codes", "success_pct", "latency_ms", "latency_hdr"} {
		if _, ok := target[field]; !ok {
			t.Errorf("a target's JSON lacks %q", field)
		}
		v := target[field]
		delete(target, field)
		without, err := json.Marshal(generic)
		if err != nil {
			t.Fatal(err)
		}
		target[field] = v
		if err := validate(without); err == nil {
			t.Errorf("a target without %q matches the schema", field)
		}
	}
	for _, bad := range []struct{ what, from, to string }{
		{"weight 0", `"weight":3`, `"weight":0`},
		{"a field the schema does not know", `"targets":[{"index":0,"method":"GET"`, `"targets":[{"index":0,"method":"GET","x":1`},
		{"success_pct above 100", `"success_pct":87.5`, `"success_pct":100.5`},
		{"a negative count", `"weight":1,"counts":{"attempted":0`, `"weight":1,"counts":{"attempted":-1`},
		{"an empty list", `"targets":[`, `"targets":[],"x_targets":[`},
	} {
		if err := validate(inTargets(raw, bad.from, bad.to)); err == nil {
			t.Errorf("a report with %s matches the schema", bad.what)
		}
	}
}

// inTargets replaces the first from at or after the report's first
// "targets" with to, failing the test when there is none.
func inTargets(raw []byte, from, to string) []byte {
	i := bytes.Index(raw, []byte(`"targets":`))
	j := bytes.Index(raw[max(i, 0):], []byte(from))
	if i < 0 || j < 0 {
		panic("inTargets: " + from + " is not in the report's targets")
	}
	j += i
	return append(append(append([]byte(nil), raw[:j]...), to...), raw[j+len(from):]...)
}
