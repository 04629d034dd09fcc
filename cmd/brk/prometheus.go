package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/metrics"
	"github.com/brk-bench/brk/internal/redact"
	"github.com/brk-bench/brk/internal/remotewrite"
)

// envPromAuthorization holds the Authorization header's value for
// --prometheus-remote-write: an environment variable, never a flag, so
// that it does not show in a process listing.
const envPromAuthorization = "BRK_PROMETHEUS_AUTHORIZATION"

// promFlags push a run's live figures to Prometheus (the requests,
// connections and rate tests): see docs/prometheus.md.
type promFlags struct {
	PrometheusRemoteWrite      string   `name:"prometheus-remote-write" placeholder:"URL" help:"Push the level, outcomes, latency and verdicts to this Prometheus remote-write endpoint once a second and at each phase end (the Authorization header's value, if any, from the environment variable BRK_PROMETHEUS_AUTHORIZATION); a slow or failing receiver changes nothing but the drop count."`
	PrometheusLabel            []string `name:"prometheus-label" sep:"none" placeholder:"NAME=VALUE" help:"Add this label to every pushed series (repeatable)."`
	PrometheusNativeHistograms bool     `name:"prometheus-native-histograms" help:"Push latency as a native histogram instead of classic buckets (the receiver needs native histograms enabled)."`
	RunID                      string   `name:"run-id" placeholder:"ID" help:"Name the run (the header, the JSON's run_id, the run_id label); default: its start and six random digits, or one every shard derives from the plan and --start-at."`
}

// flushBudget bounds the push's flush at exit.
const flushBudget = 800 * time.Millisecond

var runIDRE = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// promFeed is one run's push: the run id, and the pusher with the
// cumulative figures of the phases finished so far. Without a pusher it
// only names the run.
type promFeed struct {
	runID string
	text  io.Writer // the header's and the summary's writer

	pusher   *remotewrite.Pusher // nil: no push, the run id only
	native   bool
	edges    []float64
	verdicts bool // push phase and run verdicts: not a shard other than 0, nor an uncoordinated one

	mu   sync.Mutex
	cur  remotewrite.Sample   // labels, level, phase and role of the running phase
	done remotewrite.Outcomes // through the last finished phase, this box's own
	sumS float64              // the exact latency sum of done, in seconds

	// A request mix (not in a coordinated shard): each target's outcomes
	// through the last finished phase, by mix index, and their sums.
	mix        bool
	targets    []remotewrite.TargetOutcomes
	targetSums []float64
}

// newPromFeed checks the push flags and starts the pusher (nothing is sent
// before the first phase starts). f may be nil (brk demo): the run gets a
// random id and no push. No label carries one of sec.
func newPromFeed(f *promFlags, text io.Writer, mode brk.Mode, t brk.Target, p brk.Plan, sec *redact.Secrets) (*promFeed, error) {
	if f == nil {
		f = &promFlags{}
	}
	id, err := f.runID(mode, t, p)
	if err != nil {
		return nil, err
	}
	feed := &promFeed{runID: id, text: text}
	if f.PrometheusRemoteWrite == "" {
		return feed, nil
	}
	labels := map[string]string{}
	for _, l := range f.PrometheusLabel {
		name, value, ok := strings.Cut(l, "=")
		if !ok || name == "" {
			return nil, refuse("--prometheus-label %q: want NAME=VALUE", l)
		}
		if _, dup := labels[name]; dup {
			return nil, refuse("--prometheus-label %s given twice", name)
		}
		labels[name] = sec.String(value)
	}
	feed.native = f.PrometheusNativeHistograms
	if !feed.native {
		feed.edges = remotewrite.Buckets(p.Timeout, p.MaxP99)
	}
	pusher, err := remotewrite.New(remotewrite.Config{
		URL: f.PrometheusRemoteWrite, Labels: labels, Authorization: os.Getenv(envPromAuthorization),
		Native: feed.native, Edges: feed.edges,
	})
	if err != nil {
		msg, _ := strings.CutPrefix(err.Error(), "prom: ")
		return nil, refuse("--prometheus-remote-write: %s", msg)
	}
	feed.pusher = pusher
	feed.verdicts = p.Shard == nil || p.Shard.Index == 0 && p.Shard.Coordinator != ""
	feed.cur = remotewrite.Sample{RunID: id, Test: string(mode), Protocol: t.Proto().Name(), Origin: origin(t.URL)}
	if p.Shard != nil {
		feed.cur.Shard = strconv.Itoa(p.Shard.Index)
	}
	feed.mix = len(t.Mix) > 0 && (p.Shard == nil || p.Shard.Coordinator == "")
	if feed.mix {
		// Every target's series from the first sample, at 0: a run-wide
		// series is never sent beside them.
		feed.targets = make([]remotewrite.TargetOutcomes, len(t.Mix))
		feed.targetSums = make([]float64, len(t.Mix))
		for i, r := range t.Mix {
			feed.targets[i].Target = targetLabel(i, r.Method, r.URL)
		}
	}
	return feed, nil
}

// runID is --run-id, or the run's own (idAt): its start and six random
// digits for a run on one box; for a shard, derived from what every shard
// shares (the plan and --start-at), so that the shards of one run agree
// without a word. A coordinated run
// without --start-at has no shared start before it runs: its shards
// derive the id from the plan and the start the coordinator picked, known
// only at the end (the JSON's run_id), so a push needs --run-id there.
func (f *promFlags) runID(mode brk.Mode, t brk.Target, p brk.Plan) (string, error) {
	if f.RunID != "" {
		if !runIDRE.MatchString(f.RunID) {
			return "", refuse("--run-id %q: want 1 to 64 of A-Z a-z 0-9 . _ : -", f.RunID)
		}
		return f.RunID, nil
	}
	if p.Shard == nil {
		var b [4]byte
		_, _ = rand.Read(b[:])
		return idAt(time.Now(), binary.BigEndian.Uint32(b[:])), nil
	}
	if p.Shard.StartAt.IsZero() {
		if f.PrometheusRemoteWrite != "" {
			return "", refuse("--prometheus-remote-write with --shard and a coordinator picking the start needs --run-id ID, the same on every shard (or --start-at T)")
		}
		return "", nil // shardRunID after the run
	}
	return shardRunID(mode, t, p, p.Shard.StartAt), nil
}

// shardRunID derives a sharded run's id from what its shards share: the
// test, the request, the plan's levels, timing and SLA, the shard count
// and phase 0's start.
func shardRunID(mode brk.Mode, t brk.Target, p brk.Plan, start time.Time) string {
	h := sha256.New()
	fmt.Fprintf(h, "brk-run-id\x00%s\x00%s\x00%s\x00%d\x00%x\x00", mode, t.URL, t.Method, len(t.Headers), sha256.Sum256(t.Body))
	for _, hd := range t.Headers {
		fmt.Fprintf(h, "%s: %s\x00", hd.Name, hd.Value)
	}
	fmt.Fprintf(h, "%d %d %d %d %v %v %v %d %d\x00", p.Conns, p.Start, p.Pace, p.Max, p.Phase, p.Timeout, p.Accept, p.Shard.Count, start.UnixMilli())
	return idAt(start, binary.BigEndian.Uint32(h.Sum(nil)))
}

// idAt is a run id: when the run started (UTC, to the second) and six
// digits, e.g. 20261201T183512-004821.
func idAt(t time.Time, n uint32) string {
	return fmt.Sprintf("%s-%06d", t.UTC().Format("20060102T150405"), n%1_000_000)
}

// origin is scheme://host:port of a target URL (the port filled in).
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return u.Scheme + "://" + net.JoinHostPort(u.Hostname(), port)
}

// observe wraps obs: the header gains the run id and the push's target,
// and with a push each phase's start, each live reading and each phase's
// end becomes a sample.
func (f *promFeed) observe(obs brk.Observer) brk.Observer {
	if f.pusher != nil {
		return &promObserver{inner: obs, f: f}
	}
	return idObserver{obs, f}
}

// writeHeader adds the run id (and the push) under the run's header.
func (f *promFeed) writeHeader() {
	if f.runID != "" {
		fmt.Fprintf(f.text, "  run id %s\n", f.runID)
	}
}

// idObserver only names the run in the header.
type idObserver struct {
	brk.Observer
	f *promFeed
}

func (o idObserver) WorkersStarted(threads int) {
	o.Observer.WorkersStarted(threads)
	o.f.writeHeader()
}

// promObserver turns the run's observations into samples. Its Progress
// runs on the engine's reporter goroutine, the rest on the caller's; the
// feed's mutex orders them. Nothing here is on the request path: the live
// reading is the one the progress line shows, read from the workers'
// atomics, and Push never waits for the network.
type promObserver struct {
	inner brk.Observer
	f     *promFeed
}

func (o *promObserver) WorkersStarted(threads int) {
	o.inner.WorkersStarted(threads)
	o.f.writeHeader()
	fmt.Fprintf(o.f.text, "  pushing to Prometheus remote write once a second and at each phase end (docs/prometheus.md)\n")
}

func (o *promObserver) PhaseStarted(p brk.PhaseStart) {
	o.inner.PhaseStarted(p)
	f := o.f
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cur.Level, f.cur.Phase, f.cur.Role = float64(p.Level), p.Index, p.Role
	s := f.sample()
	f.pusher.Push(s)
}

func (o *promObserver) Progress(g brk.Progress) {
	o.inner.Progress(g)
	f := o.f
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.sample()
	if f.mix {
		// The live reading has no targets: a mix's per-target series
		// move at phase ends.
		f.pusher.Push(s)
		return
	}
	s.Successes += g.Succeeded
	s.Failures = addFailures(f.done.Failures, func(name string) uint64 { return g.Failed.Failure(name) })
	if !f.native {
		s.Latency = f.liveLatency(&g.Latency)
	}
	f.pusher.Push(s)
}

// liveLatency is the classic histogram of the finished phases plus the
// running phase's responses so far, read from the coarse live counters
// (buckets at most 12.5 % wide). Each coarse bucket counts at its upper
// edge and sums at its lower one, so that no cumulative le bucket, nor
// the sum, of a live sample exceeds what the phase's end then pushes from
// the exact HdrHistogram (whose buckets count at their lower edge): the
// counters never step back, which Prometheus would read as a reset. A
// native histogram has no such order between its buckets (a count moved
// to a neighbouring bucket is a reset), so it is pushed at phase ends only.
func (f *promFeed) liveLatency(live *[metrics.CoarseBuckets]uint64) remotewrite.Histogram {
	h := remotewrite.Histogram{Counts: slices.Clone(f.done.Latency.Counts)}
	var sum float64
	for i, n := range live {
		if n == 0 {
			continue
		}
		h.Observe(f.edges, float64(metrics.CoarseUpper(i))/1e6, n)
		if i > 0 {
			sum += float64(metrics.CoarseUpper(i-1)+1) / 1e6 * float64(n)
		}
	}
	h.Sum = f.sumS + sum
	return h
}

func (o *promObserver) PhaseFinished(ps *brk.PhaseStats) {
	o.inner.PhaseFinished(ps)
	f := o.f
	f.mu.Lock()
	defer f.mu.Unlock()
	f.addPhase(ps)
	s := f.sample()
	if f.verdicts {
		s.PhaseVerdict = phaseVerdict(ps)
	}
	f.pusher.Push(s)
}

// sample is the running phase's sample as of the last phase end: the
// labels, level, phase and role, and the finished phases' outcomes (a
// mix's per target). The caller holds f.mu.
func (f *promFeed) sample() remotewrite.Sample {
	s := f.cur
	s.Outcomes = f.done
	s.Targets = f.targets
	return s
}

// phaseVerdict names a phase's verdict as brk_phase_verdict's label.
func phaseVerdict(ps *brk.PhaseStats) string {
	switch {
	case ps.NotJudged:
		return "not_judged"
	case ps.Interrupted:
		return "interrupted"
	case ps.Inconclusive:
		return "inconclusive"
	case ps.Accepted:
		return "accepted"
	}
	return "rejected"
}

// addFailures returns base plus each category's n(name), as a new map.
func addFailures(base map[string]uint64, n func(name string) uint64) map[string]uint64 {
	out := make(map[string]uint64, len(base))
	for _, name := range brk.FailureCategories() {
		out[name] = base[name] + n(name)
	}
	return out
}

// addPhase adds a finished phase's outcomes to the run's cumulative ones:
// this box's own measurement (a shard's Raw, else the phase's stats), its
// latency from the phase's merged HdrHistogram. With a request mix each
// target's outcomes are added too, from the phase's targets (not in a
// coordinated shard, whose targets are the merged run's).
func (f *promFeed) addPhase(ps *brk.PhaseStats) {
	own := ps.Own()
	f.add(&f.done, &f.sumS, own.Counts.Succeeded, own.Counts.Failure, own.StatusCodes,
		decodeHist(own.LatencyHdr), own.LatencyMs.Mean*float64(own.LatencyMs.Count)/1e3)
	if !f.mix {
		return
	}
	for _, ts := range ps.Targets {
		for len(f.targets) <= ts.Index {
			f.targets = append(f.targets, remotewrite.TargetOutcomes{})
			f.targetSums = append(f.targetSums, 0)
		}
		to := &f.targets[ts.Index]
		to.Target = targetLabel(ts.Index, ts.Method, ts.URL)
		f.add(&to.Outcomes, &f.targetSums[ts.Index], ts.Counts.Succeeded, ts.Counts.Failure, ts.StatusCodes,
			decodeHist(ts.LatencyHdr), ts.LatencyMs.Mean*float64(ts.LatencyMs.Count)/1e3)
	}
}

// targetLabel is a mix target's target label: its index in the mix, its
// method and its URL's path and query (the origin is the origin label's).
func targetLabel(index int, method, rawURL string) string {
	path := rawURL
	if u, err := url.Parse(rawURL); err == nil {
		path = u.RequestURI()
	}
	return fmt.Sprintf("%d %s %s", index, method, path)
}

// decodeHist is an encoded latency histogram (nil when empty or bad).
func decodeHist(enc string) *hdrhistogram.Histogram {
	if enc == "" {
		return nil
	}
	h, err := hdrhistogram.Decode([]byte(enc))
	if err != nil {
		return nil
	}
	return h
}

// add adds one phase's outcomes to the cumulative d, whose exact latency
// sum in seconds is *sum.
func (f *promFeed) add(d *remotewrite.Outcomes, sum *float64, succeeded uint64, failed func(name string) uint64,
	codes map[string]uint64, hist *hdrhistogram.Histogram, sumS float64) {
	d.Successes += succeeded
	d.Failures = addFailures(d.Failures, failed)
	if d.Responses == nil {
		d.Responses = map[int]uint64{}
	}
	for code, n := range codes {
		if c, err := strconv.Atoi(code); err == nil { // "other" (outside 100..599) is left out
			d.Responses[c] += n
		}
	}
	if hist == nil {
		return
	}
	for _, b := range hist.Distribution() {
		if b.Count == 0 {
			continue
		}
		s := float64(b.From) / 1e6 // µs → s, the bar's lowest equivalent value (liveLatency)
		if f.native {
			d.Native.Observe(s, uint64(b.Count))
		} else {
			d.Latency.Observe(f.edges, s, uint64(b.Count))
		}
	}
	// Observe summed the bars' lower edges; keep the exact sum.
	*sum += sumS
	if f.native {
		d.Native.Sum = *sum
	} else {
		d.Latency.Sum = *sum
	}
}

// finish ends the feed after the run: the run's verdict (unless this box
// judges nothing of its own: a shard other than 0, an uncoordinated one),
// then a flush of at most 1 s. It sets the report's run_id and prometheus
// figures. It changes nothing else of res: a slow or failing receiver costs
// at most that second and the samples it drops.
func (f *promFeed) finish(res *brk.Result, mode brk.Mode, t brk.Target, p brk.Plan) {
	if f.runID == "" && res.Shard != nil && res.Shard.StartAt != "" {
		if at, err := time.Parse(time.RFC3339Nano, res.Shard.StartAt); err == nil {
			f.runID = shardRunID(mode, t, p, at)
		}
	}
	res.RunID = f.runID
	if f.pusher == nil {
		return
	}
	f.mu.Lock()
	s := f.sample()
	f.mu.Unlock()
	if f.verdicts && (res.Shard == nil || !res.Shard.Unjudged) {
		s.RunVerdict = string(res.Verdict)
	}
	f.pusher.Push(s)
	// The flush: at most flushBudget (Close's own bound is 1 s), so that
	// the run ends within 1 s of the same run without the push; what it
	// could not send is counted dropped.
	ctx, cancel := context.WithTimeout(context.Background(), flushBudget)
	_ = f.pusher.Close(ctx)
	cancel()
	res.Prometheus = &brk.PushStats{Sent: f.pusher.Sent(), Dropped: f.pusher.Dropped()}
	if err := f.pusher.Err(); err != nil {
		res.Prometheus.Error = err.Error()
	}
}

// writeSummary says what the push sent and dropped (nothing without a
// push).
func (f *promFeed) writeSummary(w io.Writer, res *brk.Result) {
	ps := res.Prometheus
	if f.pusher == nil || ps == nil {
		return
	}
	fmt.Fprintf(w, "prometheus: %d samples sent, %d dropped", ps.Sent, ps.Dropped)
	if ps.Error != "" {
		fmt.Fprintf(w, " (last error: %s)", oneLine(ps.Error))
	}
	fmt.Fprintln(w)
}

// sharedRunID is the run id of brk merge's report: the shards' one, when
// every shard report names the same ("" otherwise).
func sharedRunID(reports []*brk.Result) string {
	if len(reports) == 0 {
		return ""
	}
	id := reports[0].RunID
	for _, r := range reports[1:] {
		if r.RunID != id {
			return ""
		}
	}
	return id
}
