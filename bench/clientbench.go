package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench/contract"
)

// BenchPath is the route a client benchmark requests: every response must
// be 200 with exactly BenchBody.
const (
	BenchPath = "/plain"
	BenchBody = "ok"
)

// Matrix is a client self-benchmark (`brk bench`): every combination of
// Protocols × Connections × Depths is one fixed-load phase (Connections
// connections, Depth outstanding requests on each, for Phase; no ramp, no
// warm-up), run Repeat times. The order is deterministic (protocols, then
// connections, then depths, as listed) and reverses on every second
// repetition.
type Matrix struct {
	Protocols     []string
	Connections   []int
	Depths        []int
	Threads       int // client worker threads; 0 = the CPUs usable by the process (capped at connections)
	ServerThreads int // the responder's threads (contract.Config.Threads)
	Phase         time.Duration
	Timeout       time.Duration
	Repeat        int
	// URL, when set, is an external target instead of a child responder.
	// It must answer 200 with exactly "ok"; its CPU is not collected.
	URL string
	// Fixture is the responder child's command line: the program, then
	// its arguments (`brk fixture --child` for the built-in one). Unused
	// with URL.
	Fixture []string
	// FixtureStderr receives the child's diagnostics (nil discards them).
	FixtureStderr io.Writer
}

// Combo is one cell of the matrix.
type Combo struct {
	Protocol    string
	Connections int
	Depth       int
}

// Row is one measured phase.
type Row struct {
	Repetition int // 1-based
	Combo
	Threads       int           // client worker threads started
	ServerThreads int           // as the responder reported; 0 with an external target
	Phase         time.Duration // declared admission time
	Stats         *brk.PhaseStats
	// Responder is the responder's CPU over the phase, sampled through
	// its control pipe right before the phase starts and right after its
	// drain; nil when not collected (an external target).
	Responder      *contract.CPU
	Implementation string // the responder's name; "external" with a URL
}

// MatrixObserver follows a matrix run. RowStarted and RowFinished run on
// the caller's goroutine; Progress is each row's live reading once a
// second, from the engine's reporter goroutine (brk.Observer's Progress).
type MatrixObserver interface {
	RowStarted(index, total int, rep int, c Combo)
	RowFinished(r *Row)
	Progress(p brk.Progress)
}

// Order returns the combinations of repetition rep (1-based).
func (m Matrix) Order(rep int) []Combo {
	var out []Combo
	for _, p := range m.Protocols {
		for _, c := range m.Connections {
			for _, d := range m.Depths {
				out = append(out, Combo{Protocol: p, Connections: c, Depth: d})
			}
		}
	}
	if rep%2 == 0 {
		slices.Reverse(out)
	}
	return out
}

// plan is the fixed-load plan of one combination: one phase at depth d.
func (m Matrix) plan(c Combo) brk.Plan {
	return brk.Plan{
		Load: brk.Requests{Conns: c.Connections}, Start: c.Depth, Pace: 1, Max: c.Depth,
		Phase: m.Phase, Timeout: m.Timeout, Threads: m.Threads,
	}
}

// target is the request of every phase of protocol proto against u:
// what every request asks and every response must be.
func target(u, proto string) brk.Target {
	return brk.Target{URL: u, ExpectStatus: []int{200}, ExpectBody: []byte(BenchBody), Protocol: clientProtocol[proto]}
}

// Check validates the matrix before any process starts or traffic flows:
// protocols (CheckProtocols), the lists, and every combination's plan.
func (m Matrix) Check() error {
	if err := CheckProtocols(m.Protocols); err != nil {
		return err
	}
	switch {
	case len(m.Connections) == 0:
		return errors.New("--connections needs at least one count")
	case len(m.Depths) == 0:
		return errors.New("--depths needs at least one depth")
	case m.Repeat < 1:
		return errors.New("--repeat must be at least 1")
	case m.Phase < time.Millisecond:
		return errors.New("--phase must be at least 1ms")
	case m.Timeout < time.Millisecond:
		return errors.New("--timeout must be at least 1ms")
	case m.Threads < 0:
		return errors.New("--threads must not be negative")
	case m.ServerThreads < 0:
		return errors.New("--server-threads must not be negative")
	case m.URL == "" && len(m.Fixture) == 0:
		return errors.New("no responder: give a fixture command or --url")
	}
	for _, c := range m.Connections {
		if c < 1 {
			return fmt.Errorf("--connections: %d: each count must be at least 1", c)
		}
	}
	for _, d := range m.Depths {
		if d < 1 {
			return fmt.Errorf("--depths: %d: each depth must be at least 1", d)
		}
	}
	u := "http://127.0.0.1:1" + BenchPath
	if m.URL != "" {
		pu, err := url.Parse(m.URL)
		if err != nil || pu.Scheme != "http" && pu.Scheme != "https" || pu.Host == "" {
			return fmt.Errorf("--url %q: want http(s)://host[:port]/path", m.URL)
		}
		u = m.URL
	}
	for _, c := range m.Order(1) {
		t := target(u, c.Protocol)
		if c.Protocol == "h2-tls" && m.URL == "" {
			t.URL, t.TLS.Insecure = strings.Replace(u, "http://", "https://", 1), true
		}
		if err := brk.Validate(t, m.plan(c)); err != nil {
			return err
		}
	}
	return nil
}

// Run runs the matrix and returns its rows in the order they ran. A
// responder child is started per protocol before its first phase and
// stopped at the end. The error is non-nil when the matrix could not
// finish: a bad matrix (as Check), a responder that failed, a phase that
// could not run (nothing listening), or ctx ending (ctx.Err()); the rows
// measured until then are returned with it.
func Run(ctx context.Context, m Matrix, obs MatrixObserver) (rows []*Row, err error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	children := map[string]*contract.Child{}
	defer func() {
		for _, p := range m.Protocols { // a fixed order
			if c := children[p]; c != nil {
				if serr := c.Stop(); err == nil && serr != nil {
					err = serr
				}
			}
		}
	}()
	total := m.Repeat * len(m.Order(1))
	i := 0
	for rep := 1; rep <= m.Repeat; rep++ {
		for _, c := range m.Order(rep) {
			if ctx.Err() != nil {
				return rows, ctx.Err()
			}
			var child *contract.Child
			if m.URL == "" {
				if child = children[c.Protocol]; child == nil {
					child, err = contract.Start(m.Fixture[0], m.Fixture[1:], contract.Config{
						Protocol: c.Protocol, Threads: m.ServerThreads, TLS: c.Protocol == "h2-tls",
						Listen: "127.0.0.1:0",
						Routes: []contract.Route{{Path: BenchPath, Status: 200, Body: BenchBody}},
					}, m.FixtureStderr)
					if err != nil {
						return rows, err
					}
					children[c.Protocol] = child
				}
			}
			if obs != nil {
				obs.RowStarted(i, total, rep, c)
			}
			i++
			r, err := m.runRow(ctx, rep, c, child, obs)
			if r != nil {
				rows = append(rows, r)
				if obs != nil {
					obs.RowFinished(r)
				}
			}
			if err != nil {
				return rows, err
			}
		}
	}
	return rows, nil
}

// rowObserver samples the responder at the phase's boundaries.
type rowObserver struct {
	child  *contract.Child
	obs    MatrixObserver // gets the live readings
	s0, s1 contract.Sample
	stats  *brk.PhaseStats
	err    error
}

func (o *rowObserver) WorkersStarted(int) {}

func (o *rowObserver) PhaseStarted(brk.PhaseStart) {
	if o.child != nil {
		o.s0, o.err = o.child.Sample()
	}
}

func (o *rowObserver) PhaseFinished(s *brk.PhaseStats) {
	if o.child != nil && o.err == nil {
		o.s1, o.err = o.child.Sample()
	}
	o.stats = s
}

func (o *rowObserver) Progress(p brk.Progress) {
	if o.obs != nil {
		o.obs.Progress(p)
	}
}

func (m Matrix) runRow(ctx context.Context, rep int, c Combo, child *contract.Child, obs MatrixObserver) (*Row, error) {
	t := target(m.URL, c.Protocol)
	impl := "external"
	if child != nil {
		t.URL = "http://" + child.Hello.Addr + BenchPath
		impl = child.Hello.Implementation
		if child.Hello.TLS {
			// Trust the child's own certificate, and nothing else.
			ca, err := trustFile(child.Hello.CertPEM)
			if err != nil {
				return nil, err
			}
			defer os.Remove(ca)
			t.URL = "https://" + child.Hello.Addr + BenchPath
			t.TLS.CACert = ca
		}
	}
	if child != nil {
		// A responder that is gone gets no phase: its row would measure
		// connection failures against nothing, with no responder CPU.
		if _, err := child.Sample(); err != nil {
			return nil, fmt.Errorf("%s, %d connections, depth %d: the responder is gone: %w", c.Protocol, c.Connections, c.Depth, err)
		}
	}
	ro := &rowObserver{child: child, obs: obs}
	res, err := brk.Run(ctx, t, m.plan(c), ro)
	if err != nil {
		return nil, err
	}
	if ro.stats == nil {
		return nil, fmt.Errorf("%s, %d connections, depth %d: no phase ran: %s", c.Protocol, c.Connections, c.Depth, res.Reason)
	}
	if res.Verdict == brk.VerdictInterrupted {
		return nil, ctx.Err() // a cut phase is no row
	}
	r := &Row{
		Repetition: rep, Combo: c, Threads: res.Threads, Phase: m.Phase,
		Stats: ro.stats, Implementation: impl,
	}
	if child != nil {
		r.ServerThreads = child.Hello.Threads
		if ro.err != nil {
			// The responder went during the phase: the phase measured
			// it dying, so it is no row either.
			return nil, fmt.Errorf("%s, %d connections, depth %d: the responder is gone: %w", c.Protocol, c.Connections, c.Depth, ro.err)
		}
		cpu := ro.s1.Sub(ro.s0)
		r.Responder = &cpu
	}
	return r, nil
}

// trustFile writes a responder's certificate to a temporary PEM file for
// TLSOptions.CACert; the caller removes it.
func trustFile(pem string) (string, error) {
	if pem == "" {
		return "", errors.New("the responder serves TLS but named no certificate (hello's cert_pem)")
	}
	f, err := os.CreateTemp("", "brk-bench-ca-*.pem")
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(pem); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), f.Close()
}
