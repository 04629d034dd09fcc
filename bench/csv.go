package bench

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Columns are the CSV columns of a client benchmark, one row per phase.
// An empty cell is a value that was not measured (never a zero);
// docs/bench.md ("Benchmark the client") documents each.
var Columns = []string{
	"repetition", "protocol", "connections", "depth", "threads", "server_threads",
	"phase_s", "duration_s",
	"attempted", "succeeded", "timeout", "transport", "abandoned", "connect", "connect_timeout",
	"status", "body", "protocol_error", "all_ok",
	"successes_per_s",
	"client_user_s", "client_system_s", "client_cpu_us_per_attempt", "client_cpu_us_per_success",
	"target_coverage_pct", "worker_busy_pct", "client_bound", "machine_cpu_pct",
	"responder_user_s", "responder_system_s", "responder_cpu_us_per_response",
	"latency_p50_ms", "latency_p99_ms",
	"responder",
}

// CSVWriter writes the header, then one line per row, flushing each.
type CSVWriter struct {
	w      *csv.Writer
	header bool
}

// NewCSVWriter returns a writer to w.
func NewCSVWriter(w io.Writer) *CSVWriter { return &CSVWriter{w: csv.NewWriter(w)} }

// Write writes r (after the header, the first time).
func (c *CSVWriter) Write(r *Row) error {
	if !c.header {
		c.header = true
		if err := c.w.Write(Columns); err != nil {
			return err
		}
	}
	if err := c.w.Write(r.Record()); err != nil {
		return err
	}
	c.w.Flush()
	return c.w.Error()
}

// WriteHeader writes the header if no line has been written yet.
func (c *CSVWriter) WriteHeader() error {
	if c.header {
		return nil
	}
	c.header = true
	if err := c.w.Write(Columns); err != nil {
		return err
	}
	c.w.Flush()
	return c.w.Error()
}

func f(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
func u(v uint64) string            { return strconv.FormatUint(v, 10) }
func secs(d time.Duration) string  { return f(d.Seconds(), 6) }

// perEach is total CPU µs ÷ n, or "" when n is 0.
func perEach(cpu time.Duration, n uint64) string {
	if n == 0 {
		return ""
	}
	return f(float64(cpu.Nanoseconds())/1e3/float64(n), 3)
}

// Record is the row's CSV cells, in Columns order.
func (r *Row) Record() []string {
	s := r.Stats
	c := s.Counts
	client := time.Duration((s.ClientCPU.UserS + s.ClientCPU.SystemS) * 1e9)
	rec := map[string]string{
		"repetition": strconv.Itoa(r.Repetition), "protocol": r.Protocol,
		"connections": strconv.Itoa(r.Connections), "depth": strconv.Itoa(r.Depth),
		"threads": strconv.Itoa(r.Threads), "server_threads": "",
		"phase_s": f(r.Phase.Seconds(), 3), "duration_s": f(s.DurationS, 6),
		"attempted": u(c.Attempted), "succeeded": u(c.Succeeded),
		"timeout": u(c.Timeout), "transport": u(c.Transport), "abandoned": u(c.Abandoned),
		"connect": u(c.Connect), "connect_timeout": u(c.ConnectTimeout),
		"status": u(c.Status), "body": u(c.Body), "protocol_error": u(c.Protocol),
		"all_ok":          strconv.FormatBool(c.Attempted > 0 && c.Succeeded == c.Attempted),
		"successes_per_s": f(s.RequestsPerSec, 1),
		"client_user_s":   f(s.ClientCPU.UserS, 6), "client_system_s": f(s.ClientCPU.SystemS, 6),
		"client_cpu_us_per_attempt": perEach(client, c.Attempted),
		"client_cpu_us_per_success": perEach(client, c.Succeeded),
		"target_coverage_pct":       f(s.TargetCoveragePct, 2),
		"responder":                 r.Implementation,
	}
	if r.ServerThreads > 0 {
		rec["server_threads"] = strconv.Itoa(r.ServerThreads)
	}
	if s.WorkerBusyPct != nil {
		rec["worker_busy_pct"] = f(*s.WorkerBusyPct, 1)
		rec["client_bound"] = strconv.FormatBool(s.ClientBound)
	}
	if s.MachineCPUPct != nil {
		rec["machine_cpu_pct"] = f(*s.MachineCPUPct, 1)
	}
	if r.Responder != nil {
		rec["responder_user_s"] = secs(r.Responder.User)
		rec["responder_system_s"] = secs(r.Responder.System)
		rec["responder_cpu_us_per_response"] = perEach(r.Responder.User+r.Responder.System, s.LatencyMs.Count)
	}
	if s.LatencyMs.Count > 0 {
		rec["latency_p50_ms"] = f(s.LatencyMs.P50, 3)
		rec["latency_p99_ms"] = f(s.LatencyMs.P99, 3)
	}
	out := make([]string, len(Columns))
	for i, k := range Columns {
		out[i] = rec[k]
	}
	return out
}

// TableHeader is the human table's header (stderr).
const TableHeader = "rep proto   conns depth thr srv   succ/s  µs/ok cli  cov%  bound  µs/resp srv  p50 ms  p99 ms  failures"

// TableLine is one row of the human table.
func (r *Row) TableLine() string {
	s := r.Stats
	c := s.Counts
	client := time.Duration((s.ClientCPU.UserS + s.ClientCPU.SystemS) * 1e9)
	dash := func(v string) string {
		if v == "" {
			return "-"
		}
		return v
	}
	srv, resp, bound := "-", "-", "-"
	if r.ServerThreads > 0 {
		srv = strconv.Itoa(r.ServerThreads)
	}
	if r.Responder != nil {
		resp = dash(perEach(r.Responder.User+r.Responder.System, s.LatencyMs.Count))
	}
	if s.WorkerBusyPct != nil {
		bound = strconv.FormatBool(s.ClientBound)
	}
	var fails []string
	for _, x := range []struct {
		n string
		v uint64
	}{{"timeout", c.Timeout}, {"transport", c.Transport}, {"abandoned", c.Abandoned}, {"connect", c.Connect},
		{"connect_timeout", c.ConnectTimeout}, {"status", c.Status}, {"body", c.Body}, {"protocol", c.Protocol}} {
		if x.v > 0 {
			fails = append(fails, fmt.Sprintf("%s %d", x.n, x.v))
		}
	}
	failures := "none"
	if len(fails) > 0 {
		failures = strings.Join(fails, ", ")
	}
	p50, p99 := "-", "-"
	if s.LatencyMs.Count > 0 {
		p50, p99 = f(s.LatencyMs.P50, 3), f(s.LatencyMs.P99, 3)
	}
	return fmt.Sprintf("%3d %-6s %6d %5d %3d %3s %8.0f %10s %5.1f %6s %12s %7s %7s  %s",
		r.Repetition, r.Protocol, r.Connections, r.Depth, r.Threads, srv, s.RequestsPerSec,
		dash(perEach(client, c.Succeeded)), s.TargetCoveragePct, bound, resp, p50, p99, failures)
}
