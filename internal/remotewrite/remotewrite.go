// Package remotewrite pushes brk's live figures to a Prometheus remote-write 1.0
// receiver (https://prometheus.io/docs/specs/remote_write_spec/), with the
// Prometheus project's own client (github.com/prometheus/client_golang/exp
// api/remote) and the v1 messages generated from the Prometheus
// repository's protobuf definitions (buf.build/gen/go/prometheus/prometheus).
//
// The caller builds a Sample from its live counters once a Config.Interval
// and at each phase end and hands it to Pusher.Push, which never waits for
// the network: the samples queue for one goroutine that sends them, and a
// sample that cannot be queued or sent is dropped and counted.
package remotewrite

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"time"
)

// Series names, as a receiver stores them under __name__.
const (
	SeriesLevel         = "brk_level"                  // gauge: the current level
	SeriesPhaseIndex    = "brk_phase_index"            // gauge: the current phase, from 0
	SeriesPhaseRole     = "brk_phase_role"             // gauge {role}: 1 for the current phase's role, 0 for roles seen before
	SeriesPhaseVerdict  = "brk_phase_verdict"          // gauge {verdict}: 1, on the sample that ends a phase
	SeriesRunVerdict    = "brk_run_verdict"            // gauge {verdict}: 1, on the run's last sample
	SeriesSuccesses     = "brk_successes_total"        // counter
	SeriesFailures      = "brk_failures_total"         // counter {category}
	SeriesResponses     = "brk_responses_total"        // counter {code}
	SeriesLatency       = "brk_latency_seconds"        // native histogram (Config.Native)
	SeriesLatencyBucket = "brk_latency_seconds_bucket" // classic histogram {le}
	SeriesLatencySum    = "brk_latency_seconds_sum"
	SeriesLatencyCount  = "brk_latency_seconds_count"
	SeriesPushDropped   = "brk_push_dropped_total" // counter: samples this pusher could not send
)

// Label names the pusher sets. Config.Labels may not use them.
const (
	LabelRunID    = "run_id"
	LabelTest     = "test"
	LabelProtocol = "protocol"
	LabelOrigin   = "origin"
	LabelShard    = "shard"
	LabelTarget   = "target"
	LabelRole     = "role"
	LabelVerdict  = "verdict"
	LabelCategory = "category"
	LabelCode     = "code"
	LabelLe       = "le"
)

var reservedLabels = map[string]bool{
	LabelRunID: true, LabelTest: true, LabelProtocol: true, LabelOrigin: true, LabelShard: true,
	LabelTarget: true, LabelRole: true, LabelVerdict: true, LabelCategory: true, LabelCode: true,
	LabelLe: true,
}

// SeriesNames returns every series name the pusher writes, in a fixed
// order. A receiver stores brk_latency_seconds only for a Pusher with
// Config.Native, and brk_latency_seconds_bucket, _sum and _count only for
// one without; every other name is written in both modes.
func SeriesNames() []string {
	return []string{
		SeriesLevel, SeriesPhaseIndex, SeriesPhaseRole, SeriesPhaseVerdict, SeriesRunVerdict,
		SeriesSuccesses, SeriesFailures, SeriesResponses,
		SeriesLatency, SeriesLatencyBucket, SeriesLatencySum, SeriesLatencyCount,
		SeriesPushDropped,
	}
}

// seriesNamesFor returns the names a receiver stores for one mode: the
// names SeriesNames lists less the other mode's latency series.
func seriesNamesFor(native bool) []string {
	var out []string
	for _, n := range SeriesNames() {
		switch n {
		case SeriesLatency:
			if !native {
				continue
			}
		case SeriesLatencyBucket, SeriesLatencySum, SeriesLatencyCount:
			if native {
				continue
			}
		}
		out = append(out, n)
	}
	return out
}

// Config configures a Pusher. It is validated by New, before any push.
type Config struct {
	// URL is the receiver's remote-write endpoint, whole, e.g.
	// "http://127.0.0.1:9090/api/v1/write" (--prometheus-remote-write).
	URL string
	// Labels are added to every series (--prometheus-label name=value).
	// Names follow Prometheus's rule ([a-zA-Z_][a-zA-Z0-9_]*, no leading
	// "__") and may not be one the pusher sets itself.
	Labels map[string]string
	// Authorization, when not empty, is sent as the Authorization header's
	// value. The caller reads it from an environment variable, never from
	// a flag, so that it does not show in a process listing.
	Authorization string
	// Native sends latency as a native histogram (Sample.Native) instead
	// of a classic one (Sample.Latency); the receiver must be started with
	// native histograms enabled.
	Native bool
	// Interval is how often the caller pushes a sample; 0 means 1 s. The
	// pusher bounds each request to 5 intervals.
	Interval time.Duration
	// Edges are the classic histogram's bucket upper bounds in seconds,
	// ascending, finite and positive (+Inf is implied). Sample.Latency
	// counts per these edges. Buckets builds a set. Required unless Native.
	Edges []float64
}

var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// validate reports the first problem with c, and returns c with defaults
// filled in.
func (c Config) validate() (Config, error) {
	u, err := url.Parse(c.URL)
	if err != nil {
		return c, fmt.Errorf("prom: remote-write URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("prom: remote-write URL %q: want http:// or https:// and a host", u.Redacted())
	}
	for name := range c.Labels {
		if !labelName.MatchString(name) || len(name) >= 2 && name[:2] == "__" {
			return c, fmt.Errorf("prom: label name %q: want [a-zA-Z_][a-zA-Z0-9_]* without a leading __", name)
		}
		if reservedLabels[name] {
			return c, fmt.Errorf("prom: label name %q is one brk sets itself", name)
		}
	}
	if c.Interval < 0 {
		return c, errors.New("prom: negative interval")
	}
	if c.Interval == 0 {
		c.Interval = time.Second
	}
	if !c.Native && len(c.Edges) == 0 {
		return c, errors.New("prom: a classic histogram needs bucket edges (see Buckets)")
	}
	for i, e := range c.Edges {
		if math.IsNaN(e) || math.IsInf(e, 0) || e <= 0 {
			return c, fmt.Errorf("prom: bucket edge %v: want a finite positive number of seconds", e)
		}
		if i > 0 && e <= c.Edges[i-1] {
			return c, fmt.Errorf("prom: bucket edges not ascending at %v", e)
		}
	}
	return c, nil
}
