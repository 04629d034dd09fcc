package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/report"
)

// benchCmd is `brk bench`: the client benchmarks itself against a responder
// child process (or an external --url), one fixed-load phase per
// combination, CSV on stdout.
type benchCmd struct {
	Protocols     []string      `default:"h1" sep:"," help:"Protocols, comma-separated: h1, h2c (HTTP/2 prior knowledge), h2-tls (HTTP/2 over TLS)." placeholder:"h1"`
	Connections   []int         `default:"64" sep:"," help:"Connection counts, comma-separated." placeholder:"N"`
	Depths        []int         `default:"1,8" sep:"," help:"Outstanding requests per connection, comma-separated." placeholder:"D"`
	Threads       int           `default:"1" help:"Client worker threads (0: the CPUs usable by the process)."`
	ServerThreads int           `default:"1" help:"Responder threads (GOMAXPROCS of the built-in child; 0: its default)."`
	Phase         time.Duration `default:"10s" help:"Length of each fixed-load phase (plus its drain)."`
	Timeout       time.Duration `default:"100ms" help:"Request budget."`
	Repeat        int           `default:"2" help:"Repetitions of the matrix; every second one runs in reverse order."`
	URL           string        `name:"url" help:"Benchmark against this external target instead of a child; it must answer 200 ok. Its CPU is not collected." placeholder:"URL"`
	FixtureBin    string        `name:"fixture-bin" help:"Responder executable that speaks the fixture contract (default: brk fixture --child)." placeholder:"PATH"`
	CSV           string        `name:"csv" default:"-" help:"Write the CSV to PATH; - writes it to stdout." placeholder:"PATH|-"`
	Quiet         bool          `help:"No live progress (shown once a second on stderr when it is a terminal)."`
}

func (c *benchCmd) matrix() (bench.Matrix, error) {
	m := bench.Matrix{
		Protocols: c.Protocols, Connections: c.Connections, Depths: c.Depths,
		Threads: c.Threads, ServerThreads: c.ServerThreads,
		Phase: c.Phase, Timeout: c.Timeout, Repeat: c.Repeat, URL: c.URL,
		FixtureStderr: os.Stderr,
	}
	for i, p := range m.Protocols {
		m.Protocols[i] = strings.TrimSpace(p)
	}
	switch {
	case c.URL != "" && c.FixtureBin != "":
		return m, errors.New("--url and --fixture-bin cannot be combined")
	case c.URL != "":
	case c.FixtureBin != "":
		m.Fixture = []string{c.FixtureBin}
	default:
		exe, err := os.Executable()
		if err != nil {
			return m, err
		}
		m.Fixture = []string{exe, "fixture", "--child"}
	}
	return m, m.Check()
}

// benchObserver prints the human table on stderr and writes each CSV line
// as its phase finishes; with live, it keeps the progress line on stderr
// while a phase runs.
type benchObserver struct {
	stderr io.Writer
	csv    *bench.CSVWriter
	csvErr error
	live   bool
}

func (o *benchObserver) RowStarted(i, n, rep int, c bench.Combo) {
	if i == 0 {
		fmt.Fprintln(o.stderr, bench.TableHeader)
	}
}

func (o *benchObserver) RowFinished(r *bench.Row) {
	fmt.Fprintln(o.stderr, r.TableLine())
	if o.csvErr == nil {
		o.csvErr = o.csv.Write(r)
	}
}

func (o *benchObserver) Progress(p brk.Progress) {
	if o.live {
		report.WriteProgress(o.stderr, p)
	}
}

func (c *benchCmd) Run(e *env) error {
	m, err := c.matrix()
	if err != nil {
		return refuseLib(err)
	}
	out := e.stdout
	var file *reportFile
	if c.CSV != "-" {
		f, err := createReport(c.CSV)
		if err != nil {
			return refuse("--csv: %v", err)
		}
		defer f.abort()
		file, out = f, f
	}
	obs := &benchObserver{stderr: e.stderr, csv: bench.NewCSVWriter(out)}
	if _, ok := terminal(e.stderr); ok && !c.Quiet {
		obs.live = true
	}
	responder := "built-in child (brk fixture --child)"
	switch {
	case c.URL != "":
		responder = "external " + c.URL + " (CPU not collected)"
	case c.FixtureBin != "":
		responder = "child " + c.FixtureBin
	}
	phases := c.Repeat * len(m.Order(1))
	reps := "1 repetition"
	if c.Repeat != 1 {
		reps = fmt.Sprintf("%d repetitions", c.Repeat)
	}
	fmt.Fprintf(e.stderr, "brk bench: %d phases of %v, protocols %s × connections %s × depths %s × %s; responder: %s\n",
		phases, c.Phase, strings.Join(c.Protocols, ","), ints(c.Connections), ints(c.Depths), reps, responder)
	rows, runErr := bench.Run(e.ctx, m, obs)
	if obs.csvErr == nil {
		obs.csvErr = obs.csv.WriteHeader() // a header even without rows
	}
	if obs.csvErr == nil && file != nil {
		obs.csvErr = file.commit()
	}
	switch {
	case runErr != nil && e.ctx.Err() != nil:
		fmt.Fprintf(e.stderr, "brk bench: interrupted after %d of %d phases\n", len(rows), phases)
		e.code = exitInterrupted
	case runErr != nil:
		fmt.Fprintf(e.stderr, "brk bench: stopped after %d of %d phases: %s\n", len(rows), phases, oneLine(runErr.Error()))
		e.code = exitInconclusive
	}
	if obs.csvErr != nil {
		fmt.Fprintf(e.stderr, "brk bench: the CSV (%s) could not be written: %v\n", c.CSV, obs.csvErr)
		if e.code != exitInterrupted {
			e.code = exitReportFailed
		}
	}
	return nil
}

func ints(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ",")
}

// serveChild is `brk fixture --child`: the built-in side of the fixture
// contract on stdin and stdout.
func (c *fixtureCmd) serveChild(e *env) error {
	if c.Capacity != 0 || c.Service != 0 || c.DelayDist != "" || c.TLS || c.CAOut != "" {
		return refuse("--child takes its configuration from stdin, not from flags")
	}
	if err := bench.ServeChild(os.Stdin, e.stdout); err != nil {
		fmt.Fprintf(e.stderr, "brk fixture --child: %v\n", err)
		e.code = 1
	}
	return nil
}
