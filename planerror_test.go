package brk_test

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk"
)

// refusals are plans and targets the library refuses before any traffic,
// with the exact refusal in the library's words and the field it refuses
// (the first of PlanError.Fields).
var refusals = []struct {
	name  string
	mode  brk.Mode
	plan  func(*brk.Plan)
	tgt   func(*brk.Target)
	field string
	want  string
}{
	{name: "conns", plan: func(p *brk.Plan) { p.Conns = -1 }, field: "Plan.Conns", want: "Plan.Conns must be at least 1"},
	{name: "pace", plan: func(p *brk.Plan) { p.Pace = -1 }, field: "Plan.Start", want: "Plan.Start and Plan.Pace must be at least 1"},
	{name: "max negative", plan: func(p *brk.Plan) { p.Max = -1 }, field: "Plan.Max", want: "Plan.Max must not be negative"},
	{name: "start over max", plan: func(p *brk.Plan) { p.Start, p.Max = 5, 3 }, field: "Plan.Start", want: "Plan.Start (5) is above Plan.Max (3)"},
	{name: "phase", plan: func(p *brk.Plan) { p.Phase = time.Microsecond }, field: "Plan.Phase", want: "Plan.Phase must be at least 1ms"},
	{name: "timeout", plan: func(p *brk.Plan) { p.Timeout = -time.Second }, field: "Plan.Timeout", want: "Plan.Timeout must be at least 1ms"},
	{name: "threads negative", plan: func(p *brk.Plan) { p.Threads = -1 }, field: "Plan.Threads", want: "Plan.Threads must not be negative"},
	{name: "threads over conns", plan: func(p *brk.Plan) { p.Conns, p.Threads = 2, 4 }, field: "Plan.Threads", want: "Plan.Threads (4) is more than Plan.Conns (2): a thread needs a connection"},
	{name: "max over level", plan: func(p *brk.Plan) { p.Max = 100000 }, field: "Plan.Start", want: "Plan.Start/Plan.Max above 65536 are not supported: they count requests per connection (100000 on each of 4 connections is 400000 outstanding)"},
	{name: "conns over level", plan: func(p *brk.Plan) { p.Conns = 100000 }, field: "Plan.Conns", want: "Plan.Conns above 65536 is not supported"},
	{name: "outstanding", plan: func(p *brk.Plan) { p.Conns, p.Max = 65536, 100 }, field: "Plan.Conns", want: "Plan.Conns × Plan.Start/Plan.Max above 4194304 outstanding requests is not supported"},
	{name: "rate fields", plan: func(p *brk.Plan) { p.Seed = 7 }, field: "Plan.RateDepth", want: "Plan.RateDepth, Plan.Arrivals and Plan.Seed apply to the rate test only"},
	{name: "max-p99", plan: func(p *brk.Plan) { p.MaxP99 = -1 }, field: "Plan.MaxP99", want: "Plan.MaxP99 and Plan.MaxP999 must not be negative"},
	{name: "repeat negative", plan: func(p *brk.Plan) { p.Repeat = -1 }, field: "Plan.Repeat", want: "Plan.Repeat must be at least 1"},
	{name: "server pid", plan: func(p *brk.Plan) { p.ServerPIDs = []int{-1} }, field: "Plan.ServerPIDs", want: "Plan.ServerPIDs -1: not a process ID"},

	{name: "search with pace", plan: func(p *brk.Plan) { p.Search, p.Pace = &brk.Search{}, 2 }, field: "Plan.Pace", want: "Plan.Pace applies to the linear ramp, not to Plan.Search"},
	{name: "growth 1", plan: func(p *brk.Plan) { p.Search = &brk.Search{Growth: 1} }, field: "Plan.Search.Growth", want: "Plan.Search.Growth 1: want a factor above 1 (at most 1000), such as 2"},
	{name: "growth NaN", plan: func(p *brk.Plan) { p.Search = &brk.Search{Growth: math.NaN()} }, field: "Plan.Search.Growth", want: "Plan.Search.Growth NaN: want a factor above 1 (at most 1000), such as 2"},
	{name: "growth huge", plan: func(p *brk.Plan) { p.Search = &brk.Search{Growth: 1e6} }, field: "Plan.Search.Growth", want: "Plan.Search.Growth 1e+06: want a factor above 1 (at most 1000), such as 2"},
	{name: "resolution negative", plan: func(p *brk.Plan) { p.Search = &brk.Search{Resolution: -1} }, field: "Plan.Search.Resolution", want: "Plan.Search.Resolution must not be negative"},
	{name: "resolution twice", plan: func(p *brk.Plan) { p.Search = &brk.Search{Resolution: 4, ResolutionPct: 2} }, field: "Plan.Search.Resolution", want: "Plan.Search.Resolution and Plan.Search.ResolutionPct exclude each other"},
	{name: "resolution pct", plan: func(p *brk.Plan) { p.Search = &brk.Search{ResolutionPct: 150} }, field: "Plan.Search.ResolutionPct", want: "Plan.Search.ResolutionPct 150: want a percentage from 0 to 100"},
	{name: "budget negative", plan: func(p *brk.Plan) { p.Budget = -time.Second }, field: "Plan.Budget", want: "Plan.Budget must not be negative"},
	{name: "budget below a phase", plan: func(p *brk.Plan) { p.Search, p.Budget = &brk.Search{}, 1500*time.Millisecond }, field: "Plan.Budget", want: "Plan.Budget (1.5s) is shorter than one phase (Plan.Phase 1s + Plan.Timeout 1s of drain)"},
	{name: "repeat with the search is fine, pace 0 without it is not", plan: func(p *brk.Plan) { p.Pace = -2 }, field: "Plan.Start", want: "Plan.Start and Plan.Pace must be at least 1"},

	{name: "accept negative", plan: func(p *brk.Plan) { p.Accept = -5 }, field: "Plan.Accept", want: "Plan.Accept -5: must not be negative (AcceptAny accepts every phase)"},
	{name: "accept NaN", plan: func(p *brk.Plan) { p.Accept = math.NaN() }, field: "Plan.Accept", want: "Plan.Accept NaN: want a percentage such as 99.99"},
	{name: "accept Inf", plan: func(p *brk.Plan) { p.Accept = math.Inf(1) }, field: "Plan.Accept", want: "Plan.Accept +Inf: want a percentage such as 99.99"},
	{name: "accept 101", plan: func(p *brk.Plan) { p.Accept = 101 }, field: "Plan.Accept", want: "Plan.Accept 101: must be at most 100"},
	{name: "accept 100.5", plan: func(p *brk.Plan) { p.Accept = 100.5 }, field: "Plan.Accept", want: "Plan.Accept 100.5: must be at most 100"},
	{name: "accept 10 decimals", plan: func(p *brk.Plan) { p.Accept = 99.9999999999 }, field: "Plan.Accept", want: "Plan.Accept 99.9999999999: at most 9 decimals"},
	{name: "accept tiny", plan: func(p *brk.Plan) { p.Accept = 1e-10 }, field: "Plan.Accept", want: "Plan.Accept 0.0000000001: at most 9 decimals"},
	{name: "accept rounded product", plan: func(p *brk.Plan) { tenth := 0.1; p.Accept = tenth + 0.2 }, field: "Plan.Accept", want: "Plan.Accept 0.30000000000000004: at most 9 decimals"},

	{name: "connections requests", mode: brk.ModeConnections, plan: func(p *brk.Plan) { p.Requests = -1 }, field: "Plan.Requests", want: "Plan.Requests must be at least 1"},
	{name: "rate requests", mode: brk.ModeRate, plan: func(p *brk.Plan) { p.Requests = 2 }, field: "Plan.Requests", want: "Plan.Requests applies to the connections test"},
	{name: "rate arrivals", mode: brk.ModeRate, plan: func(p *brk.Plan) { p.Arrivals = "burst" }, field: "Plan.Arrivals", want: `Plan.Arrivals "burst": want uniform or poisson`},
	{name: "rate depth", mode: brk.ModeRate, plan: func(p *brk.Plan) { p.RateDepth = -1 }, field: "Plan.RateDepth", want: "Plan.RateDepth must be at least 1"},
	{name: "rate outstanding", mode: brk.ModeRate, plan: func(p *brk.Plan) { p.Conns, p.RateDepth = 1000, 100000 }, field: "Plan.Conns", want: "Plan.Conns × Plan.RateDepth above 4194304 outstanding requests is not supported"},
	{name: "rate start over max", mode: brk.ModeRate, plan: func(p *brk.Plan) { p.Start, p.Max = 500, 100 }, field: "Plan.Start", want: "Plan.Start (500) is above Plan.Max (100)"},
	{name: "rate pace", mode: brk.ModeRate, plan: func(p *brk.Plan) { p.Pace = -1 }, field: "Plan.Start", want: "Plan.Start and Plan.Pace must be at least 1 (requests/s)"},
	{name: "rate max", mode: brk.ModeRate, plan: func(p *brk.Plan) { p.Max = 1e9 }, field: "Plan.Start", want: "Plan.Start/Plan.Max above 10000000 requests/s are not supported"},
	{name: "rate seed above 2^53-1", mode: brk.ModeRate, plan: func(p *brk.Plan) { p.Arrivals, p.Seed = "poisson", brk.MaxSeed+1 }, field: "Plan.Seed", want: "Plan.Seed 9007199254740992 is above 9007199254740991 (2^53−1): the JSON report could not carry it exactly (jq and JavaScript read its numbers as doubles)"},
	{name: "rate accept", mode: brk.ModeRate, plan: func(p *brk.Plan) { p.Accept = 200 }, field: "Plan.Accept", want: "Plan.Accept 200: must be at most 100"},

	{name: "url no scheme", tgt: func(t *brk.Target) { t.URL = "127.0.0.1:1/" }, field: "Target.URL", want: `Target.URL "127.0.0.1:1/": no scheme: give http://127.0.0.1:1/ or https://127.0.0.1:1/`},
	{name: "url scheme without its colon", tgt: func(t *brk.Target) { t.URL = "http//127.0.0.1:1/" }, field: "Target.URL", want: `Target.URL "http//127.0.0.1:1/": a mistyped scheme: give http://127.0.0.1:1/`},
	{name: "url scheme with one slash", tgt: func(t *brk.Target) { t.URL = "https:/127.0.0.1:1/" }, field: "Target.URL", want: `Target.URL "https:/127.0.0.1:1/": a mistyped scheme: give https://127.0.0.1:1/`},
	{name: "url scheme", tgt: func(t *brk.Target) { t.URL = "ftp://127.0.0.1:1/" }, field: "Target.URL", want: `Target.URL "ftp://127.0.0.1:1/": the scheme must be http:// or https://`},
	{name: "url no host", tgt: func(t *brk.Target) { t.URL = "http:///x" }, field: "Target.URL", want: `Target.URL "http:///x": no host`},
	{name: "url credentials", tgt: func(t *brk.Target) { t.URL = "http://u:p@127.0.0.1:1/" }, field: "Target.URL", want: `Target.URL "http://u:xxxxx@127.0.0.1:1/": credentials in URLs are not supported (use Target.Headers Authorization:)`},
	{name: "url port", tgt: func(t *brk.Target) { t.URL = "http://127.0.0.1:0/" }, field: "Target.URL", want: `Target.URL "http://127.0.0.1:0/": port "0" is not 1..65535`},
	{name: "connect", tgt: func(t *brk.Target) { t.Connect = "127.0.0.1" }, field: "Target.Connect", want: `Target.Connect "127.0.0.1": want HOST:PORT`},
	{name: "connect port", tgt: func(t *brk.Target) { t.Connect = "127.0.0.1:0" }, field: "Target.Connect", want: `Target.Connect "127.0.0.1:0": port "0" is not 1..65535`},
	{name: "tls on http", tgt: func(t *brk.Target) { t.TLS.Version = "1.3" }, field: "Target.TLS", want: "Target.TLS options need an https:// URL"},
	{name: "no resume", tgt: func(t *brk.Target) { t.URL, t.TLS.NoResume = "https://127.0.0.1:1/", true }, field: "Target.TLS.NoResume", want: "Target.TLS.NoResume applies to the connections test"},
	{name: "echo without body", tgt: func(t *brk.Target) { t.ExpectEcho = true }, field: "Target.ExpectEcho", want: "Target.ExpectEcho needs Target.Body"},
	{name: "echo and body", tgt: func(t *brk.Target) { t.ExpectEcho, t.Body, t.ExpectBody = true, []byte("x"), []byte("x") }, field: "Target.ExpectEcho", want: "Target.ExpectEcho and Target.ExpectBody cannot be combined"},
	{name: "head body", tgt: func(t *brk.Target) { t.Method, t.ExpectBody = "HEAD", []byte("x") }, field: "Target.ExpectBody", want: "Target.ExpectBody and Target.ExpectEcho cannot apply to HEAD responses, which have no body"},
	{name: "expect status", tgt: func(t *brk.Target) { t.ExpectStatus = []int{99} }, field: "Target.ExpectStatus", want: "Target.ExpectStatus 99: not an HTTP status code"},
	{name: "cacert insecure", tgt: tlsTarget(brk.TLSOptions{CACert: "x", Insecure: true}), field: "Target.TLS.CACert", want: "Target.TLS.CACert and Target.TLS.Insecure cannot be combined"},
	{name: "cacert missing", tgt: tlsTarget(brk.TLSOptions{CACert: "no-such-ca.pem"}), field: "Target.TLS.CACert", want: "Target.TLS.CACert: open no-such-ca.pem: no such file or directory"},
	{name: "tls version", tgt: tlsTarget(brk.TLSOptions{Version: "1.1"}), field: "Target.TLS.Version", want: `Target.TLS.Version "1.1": want 1.2 or 1.3`},
	{name: "tls group", tgt: tlsTarget(brk.TLSOptions{Group: "brainpool"}), field: "Target.TLS.Group", want: `Target.TLS.Group "brainpool": want X25519, secp256r1, secp384r1, secp521r1, X25519MLKEM768, SecP256r1MLKEM768 or SecP384r1MLKEM1024`},
	{name: "mlkem tls 1.2", tgt: tlsTarget(brk.TLSOptions{Version: "1.2", Group: "X25519MLKEM768"}), field: "Target.TLS.Group", want: "Target.TLS.Group X25519MLKEM768 needs TLS 1.3; it cannot be offered with Target.TLS.Version 1.2"},
	{name: "tls cipher", tgt: tlsTarget(brk.TLSOptions{Cipher: "TLS_BOGUS"}), field: "Target.TLS.Cipher", want: `Target.TLS.Cipher "TLS_BOGUS": not a cipher suite crypto/tls knows (IANA names, e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)`},
	{name: "tls 1.3 suite", tgt: tlsTarget(brk.TLSOptions{Cipher: "TLS_AES_128_GCM_SHA256"}), field: "Target.TLS.Cipher", want: "Target.TLS.Cipher TLS_AES_128_GCM_SHA256: crypto/tls does not let a client offer one TLS 1.3 suite alone, so it cannot be offered; name a TLS 1.2 suite"},
	{name: "tls 1.2 suite on 1.3", tgt: tlsTarget(brk.TLSOptions{Version: "1.3", Cipher: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}), field: "Target.TLS.Cipher", want: "Target.TLS.Cipher TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 is a TLS 1.2 suite; it cannot be offered with TLS 1.3 only"},
	{name: "cert without key", tgt: tlsTarget(brk.TLSOptions{Cert: "x.pem"}), field: "Target.TLS.Cert", want: "Target.TLS.Cert and Target.TLS.Key go together"},
	{name: "cert missing", tgt: tlsTarget(brk.TLSOptions{Cert: "no-such-cert.pem", Key: "no-such-key.pem"}), field: "Target.TLS.Cert", want: "Target.TLS.Cert/Target.TLS.Key: open no-such-cert.pem: no such file or directory"},

	{name: "shard spec", plan: shardPlan(func(s *brk.Sharding) { s.Index = 5 }), field: "Plan.Shard", want: "Plan.Shard: shard index 5 is not in 0..1"},
	{name: "shard coordinator", plan: shardPlan(func(s *brk.Sharding) { s.Coordinator = "" }), field: "Plan.Shard", want: "Plan.Shard needs Plan.Shard.Coordinator HOST:PORT (shard 0 listens there), or Plan.Shard.StartAt T to run in step without a coordinator"},
	{name: "shard token", plan: shardPlan(func(s *brk.Sharding) { s.Token = "" }), field: "Plan.Shard.Coordinator", want: "Plan.Shard.Coordinator needs Plan.Shard.Token"},
	{name: "shard baseline", plan: func(p *brk.Plan) { shardPlan(nil)(p); p.Baseline = true }, field: "Plan.Baseline", want: "Plan.Baseline is not supported with Plan.Shard"},
	{name: "shard conns", plan: func(p *brk.Plan) { shardPlan(nil)(p); p.Conns = 1 }, field: "Plan.Conns", want: "Plan.Conns 1 cannot be split over 2 shards: every shard needs a connection"},
	{name: "shard negative", plan: shardPlan(func(s *brk.Sharding) { s.JoinTimeout = -1 }), field: "Plan.Shard.Tolerance", want: "Plan.Shard.Tolerance, Plan.Shard.Allowance and Plan.Shard.JoinTimeout must not be negative"},
	{name: "shard free search", plan: func(p *brk.Plan) {
		freePlan(p)
		p.Pace, p.Search = 0, &brk.Search{}
	}, field: "Plan.Shard.StartAt", want: "Plan.Shard.StartAt without Plan.Shard.Coordinator runs every phase unjudged, so its levels must not depend on verdicts, and Plan.Search does: give Plan.Pace and Plan.Max (a linear ramp), or a coordinator"},
	{name: "shard free refine", plan: func(p *brk.Plan) { freePlan(p); p.Refine = true }, field: "Plan.Shard.StartAt", want: "Plan.Shard.StartAt without Plan.Shard.Coordinator runs every phase unjudged, so its levels must not depend on verdicts, and Plan.Refine does: run it with a coordinator"},
	{name: "shard free no max", plan: func(p *brk.Plan) { freePlan(p); p.Max = 0 }, field: "Plan.Shard.StartAt", want: "Plan.Shard.StartAt without Plan.Shard.Coordinator runs every phase of the plan: it needs Plan.Max"},
	{name: "shard free token", plan: func(p *brk.Plan) { freePlan(p); p.Shard.Token = "" }, field: "Plan.Shard", want: "Plan.Shard needs Plan.Shard.Token: it signs the shard's report"},
	{name: "shard free listen", plan: func(p *brk.Plan) { freePlan(p); p.Shard.Listen = ":1" }, field: "Plan.Shard.Listen", want: "Plan.Shard.Listen needs Plan.Shard.Coordinator"},
	{name: "shard poisson seed", mode: brk.ModeRate, plan: func(p *brk.Plan) { shardPlan(nil)(p); p.Arrivals = "poisson" }, field: "Plan.Shard", want: "Plan.Shard with Plan.Arrivals poisson needs Plan.Seed: every shard replays the same gaps"},
	{name: "shard rate conns", mode: brk.ModeRate, plan: func(p *brk.Plan) { shardPlan(nil)(p); p.Conns = 1 }, field: "Plan.Conns", want: "Plan.Conns 1 cannot be split over 2 shards: every shard needs a connection"},
}

func tlsTarget(o brk.TLSOptions) func(*brk.Target) {
	return func(t *brk.Target) { t.URL, t.TLS = "https://127.0.0.1:1/", o }
}

// freePlan is a shard without a coordinator of a linear ramp.
func freePlan(p *brk.Plan) {
	shardPlan(func(s *brk.Sharding) { s.Coordinator, s.StartAt = "", time.Now().Add(time.Hour) })(p)
	p.Conns, p.Start, p.Pace, p.Max = 4, 1, 1, 3
}

func shardPlan(edit func(*brk.Sharding)) func(*brk.Plan) {
	return func(p *brk.Plan) {
		s := &brk.Sharding{Index: 0, Count: 2, Coordinator: "127.0.0.1:1", Token: "t"}
		if edit != nil {
			edit(s)
		}
		p.Shard = s
	}
}

// TestRefusalsSpeakFields: every refusal is a *PlanError whose text is
// in the library's words (its Go field names, no flag), whose first field
// is the refused one, and whose fields all exist in Plan or Target.
func TestRefusalsSpeakFields(t *testing.T) {
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			mode := c.mode
			if mode == "" {
				mode = brk.ModeRequests
			}
			tgt := brk.Target{URL: "http://127.0.0.1:1/"}
			p := brk.Plan{Conns: 4, Phase: time.Second}
			if c.tgt != nil {
				c.tgt(&tgt)
			}
			if c.plan != nil {
				c.plan(&p)
			}
			err := brk.Check(tgt, p, mode)
			var pe *brk.PlanError
			if !errors.As(err, &pe) {
				t.Fatalf("err %v (%T), want a *brk.PlanError", err, err)
			}
			if got := err.Error(); got != c.want {
				t.Errorf("error\n got %q\nwant %q", got, c.want)
			}
			if strings.Contains(err.Error(), "--") {
				t.Errorf("%q speaks a flag", err)
			}
			if len(pe.Fields) == 0 || pe.Fields[0] != c.field {
				t.Errorf("fields %q, want %q first", pe.Fields, c.field)
			}
			for _, f := range pe.Fields {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("field %s is not in %q", f, err)
				}
				if !isField(f) {
					t.Errorf("field %s is not a field of brk.Plan or brk.Target", f)
				}
			}
		})
	}
}

// isField reports whether sel ("Plan.Shard.Coordinator") names an exported
// field of brk.Plan or brk.Target, through pointers.
func isField(sel string) bool {
	parts := strings.Split(sel, ".")
	var ty reflect.Type
	switch parts[0] {
	case "Plan":
		ty = reflect.TypeFor[brk.Plan]()
	case "Target":
		ty = reflect.TypeFor[brk.Target]()
	default:
		return false
	}
	for _, name := range parts[1:] {
		for ty.Kind() == reflect.Pointer {
			ty = ty.Elem()
		}
		f, ok := ty.FieldByName(name)
		if !ok || !f.IsExported() {
			return false
		}
		ty = f.Type
	}
	return len(parts) > 1
}

// TestPlanErrorReword: Reword names the fields its own way, everywhere
// they occur, and leaves the rest of the text and the fields it does not
// know as they are.
// The search and its defaults: a zero Plan keeps the linear ramp; a Search
// with Repeat is accepted (every bisection probe repeats); the search's
// first level is the test's default, never above Max.
func TestSearchPlanDefaults(t *testing.T) {
	tgt := brk.Target{URL: "http://127.0.0.1:1/"}
	if err := brk.Validate(tgt, brk.Plan{Search: &brk.Search{}, Repeat: 3}); err != nil {
		t.Fatalf("a search with Repeat: %v", err)
	}
	if err := brk.Validate(tgt, brk.Plan{Load: brk.Rate{}, Search: &brk.Search{}, Refine: true}); err != nil {
		t.Fatalf("a search with Refine (no effect): %v", err)
	}
	for _, c := range []struct {
		m         brk.Mode
		max, want int
	}{{brk.ModeRequests, 0, 1}, {brk.ModeConnections, 0, 16}, {brk.ModeConnections, 8, 8}, {brk.ModeRate, 0, 100}, {brk.ModeRate, 50, 50}} {
		p := brk.Plan{Search: &brk.Search{}, Max: c.max}
		p.DefaultsFor(c.m)
		if p.Start != c.want || p.Search.Growth != 2 || p.Search.ResolutionPct != 1 || p.Pace != 0 {
			t.Errorf("%s max %d: defaults %+v %+v, want start %d, growth 2, 1 %%", c.m, c.max, p, *p.Search, c.want)
		}
	}
	var p brk.Plan
	p.Defaults()
	if p.Search != nil || p.Pace != 1 || p.Start != 1 {
		t.Errorf("a zero Plan's defaults %+v: want the linear ramp", p)
	}
}

func TestPlanErrorReword(t *testing.T) {
	err := brk.Validate(brk.Target{URL: "http://127.0.0.1:1/"}, brk.Plan{Start: 5, Max: 3})
	var pe *brk.PlanError
	if !errors.As(err, &pe) {
		t.Fatalf("err %v, want a *brk.PlanError", err)
	}
	if got, want := pe.Fields, []string{"Plan.Start", "Plan.Max"}; !reflect.DeepEqual(got, want) {
		t.Errorf("fields %q, want %q", got, want)
	}
	got := pe.Reword(func(f string) string { return map[string]string{"Plan.Max": "max:"}[f] })
	if want := "Plan.Start (5) is above max: (3)"; got != want {
		t.Errorf("reworded %q, want %q", got, want)
	}
	if pe.Reword(nil) != pe.Error() {
		t.Errorf("Reword(nil) %q, Error %q", pe.Reword(nil), pe.Error())
	}
}

// TestUnknownModeAndABShard: refusals outside Check's plan and target.
func TestUnknownModeAndABShard(t *testing.T) {
	err := brk.Check(brk.Target{URL: "http://127.0.0.1:1/"}, brk.Plan{}, brk.Mode("bogus"))
	var pe *brk.PlanError
	if !errors.As(err, &pe) || err.Error() != `unknown test "bogus"` || len(pe.Fields) != 0 {
		t.Errorf("unknown mode: %v (%T)", err, err)
	}
	tgt := brk.Target{URL: "http://127.0.0.1:1/"}
	p := brk.Plan{Shard: &brk.Sharding{Count: 2, Coordinator: "127.0.0.1:1", Token: "t"}}
	_, err = brk.AB(context.Background(), tgt, tgt, p, nil, nil)
	if !errors.As(err, &pe) || err.Error() != "Plan.Shard: an A/B run cannot be sharded" || pe.Fields[0] != "Plan.Shard" {
		t.Errorf("sharded A/B: %v (%T)", err, err)
	}
	// The deprecated RunAB: the same refusal, and a Load of another test
	// than its mode refused as RunMode refuses it.
	_, err = brk.RunAB(context.Background(), brk.ModeRequests, tgt, tgt, p, nil, nil)
	if !errors.As(err, &pe) || err.Error() != "Plan.Shard: an A/B run cannot be sharded" {
		t.Errorf("sharded A/B (RunAB): %v (%T)", err, err)
	}
	rate := brk.Plan{Load: brk.Rate{}}
	_, err = brk.RunAB(context.Background(), brk.ModeRequests, tgt, tgt, rate, nil, nil)
	_, want := brk.RunMode(context.Background(), brk.ModeRequests, tgt, rate, nil)
	if !errors.As(err, &pe) || want == nil || err.Error() != want.Error() {
		t.Errorf("RunAB of the requests test with a rate Load: %v, want RunMode's refusal %v", err, want)
	}
	// AB runs the plan's Load: a bad one is refused before any traffic.
	_, err = brk.AB(context.Background(), tgt, tgt, brk.Plan{Load: brk.Rate{Depth: -1}}, nil, nil)
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "Rate.Depth") {
		t.Errorf("AB with a bad rate Load: %v (%T), want a refusal naming Rate.Depth", err, err)
	}
}

// TestAcceptNumbers: Plan.Accept's numbers that are no refusal.
func TestAcceptNumbers(t *testing.T) {
	for _, v := range []float64{0, brk.AcceptAny, 0.5, 1, 50, 99.99, 99.999999999, 100, 1e-9} {
		p := brk.Plan{Load: brk.Requests{Conns: 4}, Accept: v}
		if err := brk.Validate(brk.Target{URL: "http://127.0.0.1:1/"}, p); err != nil {
			t.Errorf("Accept %v: %v", v, err)
		}
	}
}

// TestRateSlotWarning: the Little's-law warning names the plan's fields,
// refuses nothing, and is nil when the slots suffice.
func TestRateSlotWarning(t *testing.T) {
	w := brk.RateSlotWarning(brk.Plan{Conns: 2, Start: 10, Max: 3000, RateDepth: 3, Timeout: 1500 * time.Millisecond})
	want := "Plan.Conns 2 × Plan.RateDepth 3 = 6 slots is below Plan.Max 3000 requests/s × Plan.Timeout 1.5s = 4500 outstanding (Little's law): from 4 requests/s on, a slow response can fail the run from a lack of slots alone"
	if w == nil || w.Error() != want {
		t.Fatalf("warning %v, want %q", w, want)
	}
	if got := []string{"Plan.Conns", "Plan.RateDepth", "Plan.Max", "Plan.Timeout"}; !reflect.DeepEqual(w.Fields, got) {
		t.Errorf("fields %q, want %q", w.Fields, got)
	}
	if w := brk.RateSlotWarning(brk.Plan{Conns: 100, Start: 50}); w != nil {
		t.Errorf("100 slots for 50 requests/s × 1s: warning %v", w)
	}
	// Per shard: shard 2 of 3 has 1 of 4 connections for a third of the
	// arrivals; 3 slots a shard suffice for a third of 9/s × 1s.
	sharded := brk.Plan{Conns: 4, Start: 10, Max: 3000, RateDepth: 3, Timeout: 1500 * time.Millisecond, Shard: &brk.Sharding{Index: 2, Count: 3}}
	want = "shard 2/3: its 1 of Plan.Conns 4 connections × Plan.RateDepth 3 = 3 slots is below its share of Plan.Max 3000 requests/s (1000/s) × Plan.Timeout 1.5s = 1500 outstanding (Little's law): from 2 requests/s a shard on, a slow response can fail the run from a lack of slots alone"
	if w := brk.RateSlotWarning(sharded); w == nil || w.Error() != want {
		t.Errorf("sharded warning %v, want %q", w, want)
	}
	sharded.Max, sharded.Start, sharded.Timeout = 9, 9, time.Second
	if w := brk.RateSlotWarning(sharded); w != nil {
		t.Errorf("3 slots a shard for 3 requests/s × 1.5s: warning %v", w)
	}
}
