package brk

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"

	"github.com/brk-bench/brk/internal/metrics"
	"github.com/brk-bench/brk/internal/sched"
	"github.com/brk-bench/brk/targets"
)

// MaxTargets bounds Target.Mix (and a targets file): each worker keeps,
// per target, its outcome counters and a latency histogram for the phase
// (metrics.TargetRec), so the memory a mix costs is fixed and known at
// plan time.
const MaxTargets = targets.MaxTargets

// MaxWeight is the largest Request.Weight.
const MaxWeight = targets.MaxWeight

// The bounds are the engine's: this does not compile when they differ.
const _ = uint(MaxTargets-sched.MixMaxTargets) + uint(sched.MixMaxTargets-MaxTargets) +
	uint(MaxWeight-sched.MixMaxWeight) + uint(sched.MixMaxWeight-MaxWeight)

const fMix field = "Target.Mix"

// preparedMix is a validated request mix: every target encoded once.
type preparedMix struct {
	reqs  []Request // as given, Method upper-cased and defaulted, Weight defaulted
	tmpls templates // the protocol's templates, one per request (protocol.go)
	cfg   *sched.MixConfig
	url   string // the origin, the report's URL
}

// checkMixTarget refuses what a Target with a Mix cannot also say.
func checkMixTarget(t *Target) error {
	switch {
	case len(t.Mix) > MaxTargets:
		return refuse("%s has %d requests: at most %d (MaxTargets)", fMix, len(t.Mix), MaxTargets)
	case t.URL != "":
		return refuse("%s and %s cannot be combined: with a mix, each request's URL is its own (leave %s empty)", fMix, fURL, fURL)
	case t.Method != "":
		return refuse("%s and %s cannot be combined: with a mix, each request's method is its own (leave %s empty)", fMix, fMethod, fMethod)
	case t.Body != nil:
		return refuse("%s and %s cannot be combined: with a mix, each request's body is its own (leave %s nil)", fMix, fBody, fBody)
	}
	return nil
}

const fMethod field = "Target.Method"

// origin is u's scheme, host and port (the default port spelled out), as
// compared between a mix's requests.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return u.Scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// prepareMix validates and encodes t's mix for protocol; u is its first
// request's URL (parsed by prepare), whose origin every request must
// share.
func prepareMix(t *Target, u *url.URL, protocol Protocol) (*preparedMix, error) {
	pm := &preparedMix{tmpls: protocol.templates(), cfg: &sched.MixConfig{}, url: mixOrigin(u)}
	want := origin(u)
	weights := make([]int, len(t.Mix))
	for i, r := range t.Mix {
		ri, err := url.Parse(r.URL)
		if err != nil || !strings.Contains(r.URL, "://") {
			return nil, refuse("%s[%d].URL %q: not an absolute http:// or https:// URL", fMix, i, r.URL)
		}
		if o := origin(ri); o != want || ri.User != nil {
			return nil, refuse("%s[%d].URL %q: another origin than %s[0]'s (%s): a mix shares one origin, its connections carry every request", fMix, i, r.URL, fMix, want)
		}
		w := r.Weight
		if w == 0 {
			w = 1
		}
		if w < 1 || w > MaxWeight {
			return nil, refuse("%s[%d].Weight %d: want 1..%d", fMix, i, r.Weight, MaxWeight)
		}
		weights[i] = w
		// The request as a single target: the Target's headers, then
		// the request's; the Target's body checks apply to every one.
		one := Target{Method: r.Method, Headers: append(append([]Header(nil), t.Headers...), r.Headers...), Body: r.Body,
			ExpectBody: t.ExpectBody, ExpectEcho: t.ExpectEcho}
		t1, replay, err := encodeRequest(&one, ri)
		if err != nil {
			return nil, mixRefusal(i, err)
		}
		pm.cfg.Replay = append(pm.cfg.Replay, replay)
		if err := pm.tmpls.add(&one, ri, t1); err != nil {
			return nil, mixRefusal(i, err)
		}
		ok, err := statusCheck(r.ExpectStatus)
		if err != nil {
			return nil, mixRefusal(i, err)
		}
		pm.cfg.StatusOK = append(pm.cfg.StatusOK, ok)
		req := r
		req.Method = strings.ToUpper(r.Method)
		if req.Method == "" {
			req.Method = "GET"
			if r.Body != nil {
				req.Method = "POST"
			}
		}
		req.Weight = w
		pm.reqs = append(pm.reqs, req)
	}
	order, err := sched.NewMix(weights)
	if err != nil {
		return nil, refuse("%s: %v", fMix, strings.TrimPrefix(err.Error(), "sched: "))
	}
	pm.cfg.Order = order
	return pm, nil
}

// mixRefusal is err about request i of the mix.
func mixRefusal(i int, err error) error {
	if pe, ok := err.(*PlanError); ok {
		return refuse("%s[%d]: %s", fMix, i, pe.Error())
	}
	return refuse("%s[%d]: %v", fMix, i, err)
}

// describe is each target's identity in a report, in mix order.
func (pm *preparedMix) describe() []TargetStats {
	out := make([]TargetStats, len(pm.reqs))
	for i, r := range pm.reqs {
		out[i] = TargetStats{Index: i, Method: r.Method, URL: r.URL, Weight: r.Weight}
	}
	return out
}

// targetStats is each target's share of the phase m, in mix order, named
// by desc (the mix's targets; nil when the caller names them later).
func targetStats(m *metrics.Phase, desc []TargetStats) []TargetStats {
	if len(m.Targets) == 0 && len(desc) == 0 {
		return nil
	}
	n := max(len(m.Targets), len(desc))
	out := make([]TargetStats, n)
	for i := range out {
		ts := TargetStats{Index: i, StatusCodes: map[string]uint64{}}
		if i < len(desc) {
			ts.Method, ts.URL, ts.Weight = desc[i].Method, desc[i].URL, desc[i].Weight
		}
		if i < len(m.Targets) {
			t := &m.Targets[i]
			c := &t.Counts
			ts.Counts = countsOf(c)
			ts.StatusCodes = t.Statuses.Map()
			if c.Attempted > 0 { // as the phase's
				ts.SuccessPct = 100 * float64(c.Succeeded) / float64(c.Attempted)
			}
			h := t.Latency
			if h == nil {
				h = metrics.NewHistogram()
			}
			ts.LatencyMs = latency(h.TotalCount(), t.LatencySumNs, &metrics.Phase{Latency: h, LatencyCount: t.LatencyCount})
			ts.LatencyHdr, _ = metrics.EncodeHistogram(h)
		}
		out[i] = ts
	}
	return out
}

// nameTargets gives s's targets the identity desc has for them (brk
// merge: shard 0's report names them).
func (s *PhaseStats) nameTargets(desc []TargetStats) {
	for i := range s.Targets {
		if i < len(desc) {
			s.Targets[i].Method, s.Targets[i].URL, s.Targets[i].Weight = desc[i].Method, desc[i].URL, desc[i].Weight
		}
	}
}

// mixHash is one request of a mix as the shard plan hash names it.
type mixHash struct {
	Method       string
	URL          string
	Headers      []Header
	Body         string // sha256, hex
	Weight       int
	ExpectStatus []int
}

// mixHashes is t's mix for targetHash (nil without one).
func mixHashes(t *Target) []mixHash {
	var out []mixHash
	for _, r := range t.Mix {
		body := sha256.Sum256(r.Body)
		w := r.Weight
		if w == 0 {
			w = 1
		}
		b := ""
		if r.Body != nil {
			b = hex.EncodeToString(body[:])
		}
		out = append(out, mixHash{Method: strings.ToUpper(r.Method), URL: r.URL, Headers: r.Headers, Body: b, Weight: w, ExpectStatus: r.ExpectStatus})
	}
	return out
}

// mixOrigin is the URL a mixed run's report names: its origin.
func mixOrigin(u *url.URL) string { return fmt.Sprintf("%s://%s", u.Scheme, u.Host) }

// nameMergedTargets names the targets of a merged report's phases as the
// first shard's report names them (brk merge).
func nameMergedTargets(out, first *Result) {
	for _, s := range out.Phases {
		for _, q := range first.Phases {
			if q.Index == s.Index {
				s.nameTargets(q.Targets)
			}
		}
	}
}

// Name is how a report names t: its URL, or for a request mix its first
// request's origin and the number of targets ("http://h:8080 (3
// targets)").
func (t Target) Name() string {
	if len(t.Mix) == 0 {
		return t.URL
	}
	u, err := url.Parse(t.Mix[0].URL)
	if err != nil {
		return fmt.Sprintf("%d targets", len(t.Mix))
	}
	return fmt.Sprintf("%s (%d targets)", mixOrigin(u), len(t.Mix))
}
