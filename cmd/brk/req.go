package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/report"
)

// levelFlags are the requests and connections tests' level flags (the
// rate test has its own: rateLevels).
type levelFlags struct {
	Start int  `help:"Outstanding requests per connection in phase 0 (default: --pace, or 1 for the search; the connections test: concurrent connections, default 16 for the search)."`
	Pace  *int `placeholder:"INT" help:"Outstanding requests per connection added each phase: a linear ramp. Without it brk searches for the break (--growth, --resolution, --budget)."`
	Max   int  `help:"Ceiling per connection; reaching it ends the run Done."`
}

// loadFlags are the flags every load test shares.
type loadFlags struct {
	Conn  int           `short:"c" default:"64" help:"Connections, opened once and replaced when closed."`
	Phase time.Duration `default:"10s" help:"Admission time of each phase."`
	// Duration is wrk's -d: one phase of this length at one level.
	Duration time.Duration `short:"d" help:"A fixed load, as wrk's -d: one phase of this length at one level (--start, default 1 per connection; the connections test 16 connections, the rate test 100 requests/s), no ramp, the verdict that phase's." placeholder:"DURATION"`
	Timeout  time.Duration `default:"1s" help:"Request budget through the complete response (includes setup for a connection's first request). An SLA flag: given none of --accept, --timeout, --max-p99, --max-p999, brk judges its default SLA (99.99 % within 1s, p99 at most 100ms)."`
	Accept   string        `default:"99.99" aliases:"sla" help:"Minimum success percentage of a phase."`
	Threads  int           `short:"t" help:"Worker threads (default: CPUs usable by the process, never more than --conn)."`
	IO       string        `name:"io" enum:"auto,epoll,uring" default:"auto" help:"How the workers move bytes on this box: epoll (kqueue on macOS and the BSDs), or uring: Linux's io_uring, one system call per loop turn instead of one per read and write (refused where the kernel lacks it). auto is epoll for now. BRK_IO overrides it."`
	Connect  string        `help:"Dial HOST:PORT instead of the URL's host; the URL still gives Host." placeholder:"HOST:PORT"`

	Header       []string `short:"H" sep:"none" help:"Extra request header \"Name: value\" (repeatable; a value may hold commas)."`
	Method       string   `help:"Request method (default GET, or POST with --body-file)."`
	BodyFile     string   `help:"Send this file's bytes as the request body (POST, application/octet-stream); - reads stdin." placeholder:"PATH"`
	ExpectBody   *string  `help:"Require this exact response body."`
	ExpectEcho   bool     `help:"Require the response body to equal the --body-file bytes."`
	ExpectStatus string   `help:"Accepted status codes, comma-separated (default: any 2xx)." placeholder:"CODE,..."`

	JSON    string `name:"json" help:"Write the JSON report to PATH; - writes it to stdout and the human text to stderr." placeholder:"PATH|-"`
	Quiet   bool   `help:"No live progress (shown once a second on stderr when it is a terminal)."`
	TUI     bool   `name:"tui" help:"A full-screen live view on stderr's terminal instead of the progress line: the run's header, the running phase, ok/s, success % and p99 of each second, the levels, and the phases so far; the text report follows when it ends. Not with --quiet."`
	Verbose bool   `short:"v" help:"Write each phase's full block (requests, failures, latency, load, generator, CPU) instead of one line."`

	Refine     bool           `help:"With --pace: after the first rejected phase, bisect between the last accepted and the first rejected level until they are adjacent (single units of the level); each probe is a phase. The search always bisects."`
	Repeat     int            `default:"3" help:"The most runs of one level: a level whose verdict may be noise (a stall, too close to call, a rejection on a busy box, the first rejection, a conflict, an end of the final pair) runs again until a majority agrees; 1 confirms nothing."`
	Growth     *float64       `help:"The search (no --pace): multiply the level by this each phase until a phase is rejected (default 2)." placeholder:"FACTOR"`
	Resolution string         `help:"The search: bisect until the bracket is at most N (a total level) or P% of the last accepted level (default 1%, at least 1)." placeholder:"N|P%"`
	Budget     *time.Duration `help:"Bound the run's phases: no phase starts that could end past this (default 5m for the search, none for a --pace ramp)." placeholder:"DURATION"`
	MaxP99     time.Duration  `name:"max-p99" help:"Also reject a phase whose latency p99 exceeds this (100ms when no SLA flag is given: brk's default SLA, docs/cli.md)." placeholder:"DURATION"`
	MaxP999    time.Duration  `name:"max-p999" help:"Also reject a phase whose latency p99.9 exceeds this." placeholder:"DURATION"`
	ServerPID  []int          `name:"server-pid" help:"Report this server process's CPU and RSS per phase (Linux; repeatable)." placeholder:"PID"`

	Baseline   bool   `help:"Observe machine CPU for one idle --phase before the load (Linux)."`
	Report     string `help:"Write a self-contained HTML report with charts to PATH.html." placeholder:"PATH.html"`
	HTTP2      bool   `name:"http2" help:"Use HTTP/2: ALPN h2 over https://, prior knowledge (h2c) over http://; the level counts concurrent streams."`
	Cacert     string `help:"For https://, trust the authorities in this PEM file instead of the system's." placeholder:"PEM"`
	Insecure   bool   `help:"For https://, skip server certificate verification (encryption stays on)."`
	TLSVersion string `name:"tls-version" help:"Offer only this TLS version: 1.2 or 1.3." placeholder:"1.2|1.3"`
	TLSGroup   string `name:"tls-group" help:"Offer only this key exchange group (X25519, secp256r1, X25519MLKEM768, ...)." placeholder:"NAME"`
	TLSCipher  string `name:"tls-cipher" help:"Offer only this TLS 1.2 cipher suite (IANA name)." placeholder:"NAME"`
	Cert       string `help:"Client certificate PEM for mutual TLS (with --key)." placeholder:"PEM"`
	Key        string `help:"Client private key PEM for mutual TLS (with --cert)." placeholder:"PEM"`

	// defaultSLA: no SLA flag was given (slaTyped); plan adds
	// DefaultMaxP99 to the SLA.
	defaultSLA bool `kong:"-"`
}

// load is the flags of a load test (req, conn, rate, ab), for main to
// mark the default SLA.
func (f *loadFlags) load() *loadFlags { return f }

// DefaultMaxP99 is the p99 limit of the default SLA, judged when no SLA
// flag (--accept, --timeout, --max-p99, --max-p999) is given: 99.99 %
// within 1 s alone lets a search queue requests until the 1 s timeout
// bites (nginx: 65,536 concurrent requests, the client saturated before
// the server broke), where the throughput stopped growing 6 doublings
// earlier and each run's answer moves with the client's limits. A p99
// limit puts the break where queueing, not the timeout, degrades the
// service: level ≈ peak throughput × 100 ms, which repeats as the peak
// does (docs/cli.md, "The default SLA").
const DefaultMaxP99 = 100 * time.Millisecond

// latencyFlag is --latency (wrk's name), on the requests, connections
// and rate tests.
type latencyFlag struct {
	Latency bool `help:"After the run, print the latency percentiles (50, 75, 90, 99, 99.9, 99.99 %, max) and a histogram of the responses, from the phase's HdrHistogram: the final pair's two phases (last accepted, lowest rejected level), or a one-phase run's phase."`
}

type reqCmd struct {
	URL string `arg:"" optional:"" help:"http(s)://host[:port]/path (left out with --targets)"`
	levelFlags
	loadFlags
	targetsFlag
	latencyFlag
	shardFlags
	promFlags
}

// DefaultBudget bounds a search's phases when --budget is not given, so
// that `brk URL` ends on its own.
const DefaultBudget = 5 * time.Minute

// refuseUnserved rejects flags this build does not serve yet, and
// explicit zeros (the library would read a zero as "use the default", but
// on the command line kong already filled the defaults in, so a zero was
// typed).
func (f *loadFlags) refuseUnserved(start int, pace *int) error {
	switch {
	case f.TUI && f.Quiet:
		return refuse("--tui and --quiet ask for a live view and for none: give one of them")
	case f.Conn < 1:
		return refuse("--conn must be at least 1")
	case pace != nil && *pace < 1:
		return refuse("--pace must be at least 1")
	case pace != nil && (f.Growth != nil || f.Resolution != ""):
		return refuse("--growth and --resolution apply to the search: leave out --pace (a linear ramp), or give --refine to bisect its break")
	case f.Budget != nil && *f.Budget <= 0:
		return refuse("--budget must be positive")
	case start < 0:
		return refuse("--start must be at least 1")
	case f.Duration < 0 || f.Duration > 0 && f.Duration < time.Millisecond:
		return refuse("--duration must be at least 1ms")
	case f.Phase < time.Millisecond:
		return refuse("--phase must be at least 1ms")
	case f.Timeout < time.Millisecond:
		return refuse("--timeout must be at least 1ms")
	case strings.TrimSpace(f.Accept) == "":
		return refuse("--accept needs a percentage such as 99.99")
	case f.Report == "-":
		return refuse("--report needs a file path: the HTML report is not written to stdout (use --json - for a report on stdout)")
	case f.Repeat < 1:
		return refuse("--repeat must be at least 1")
	case f.Cacert != "" && f.Insecure:
		return refuse("--cacert and --insecure cannot be combined")
	}
	return nil
}

// plan is the library's plan of the flags for the test load (its own
// settings, from its command's flags): a linear ramp with --pace, the
// search without it — unless the first level is --max, a single level
// with nothing to search (one phase, as a ramp); the error is --accept's
// or --resolution's.
func (f *loadFlags) plan(load brk.Load, start int, pace *int, max int) (brk.Plan, error) {
	accept, err := f.accept()
	if err != nil {
		return brk.Plan{}, err
	}
	m := load.Mode()
	p := brk.Plan{
		Load: load, Start: start, Max: max,
		Phase: f.Phase, Timeout: f.Timeout, Accept: accept, Threads: f.Threads,
		IO: ioFlag(f.IO), Baseline: f.Baseline,
		Repeat: f.Repeat, MaxP99: f.MaxP99, MaxP999: f.MaxP999, ServerPIDs: f.ServerPID,
		Names: reasonNames(),
	}
	if f.defaultSLA {
		p.MaxP99 = DefaultMaxP99
	}
	if f.Budget != nil {
		p.Budget = *f.Budget
	}
	if f.Duration > 0 {
		// A fixed load: the first level is the ceiling, one phase.
		first := start
		if first == 0 {
			first = brk.DefaultSearchStart(m)
		}
		p.Phase, p.Start, p.Max, p.Ramp = f.Duration, first, first, brk.Linear{Pace: 1, Refine: f.Refine}
		return p, nil
	}
	first := start
	if first == 0 {
		first = min(brk.DefaultSearchStart(m), max)
		if max == 0 {
			first = brk.DefaultSearchStart(m)
		}
	}
	if pace == nil && max > 0 && first == max && f.Growth == nil && f.Resolution == "" {
		one := 1
		pace, p.Start = &one, first
	}
	if pace != nil {
		p.Ramp = brk.Linear{Pace: *pace, Refine: f.Refine}
		return p, nil
	}
	// --refine beside the search does nothing (the search always
	// bisects); the report records it as asked, in the plan's older field.
	p.Refine = f.Refine
	s := brk.Search{}
	if f.Growth != nil {
		s.Growth = *f.Growth
		if s.Growth == 0 {
			return p, refuse("--growth must be above 1")
		}
	}
	if s.Resolution, s.ResolutionPct, err = parseResolution(f.Resolution); err != nil {
		return p, err
	}
	p.Ramp = s
	if f.Budget == nil {
		p.Budget = DefaultBudget
	}
	return p, nil
}

// parseResolution reads --resolution: "N" (a total level) or "P%" (of the
// last accepted level); "" is the default.
func parseResolution(v string) (n int, pct float64, err error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, 0, nil
	}
	if num, ok := strings.CutSuffix(v, "%"); ok {
		pct, err = strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || pct <= 0 || pct > 100 {
			return 0, 0, refuse("--resolution %q: want a percentage above 0 and at most 100, such as 1%%", v)
		}
		return 0, pct, nil
	}
	n, err = strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, 0, refuse("--resolution %q: want a level of at least 1 (such as 10) or a percentage (such as 1%%)", v)
	}
	return n, 0, nil
}

// accept is --accept, a percentage's text ("99.99", "99.99%"), as
// brk.Plan.Accept: the float64 nearest to the exact fraction the text
// spells, whose shortest form the library reads back as that same
// fraction; 0 is brk.AcceptAny.
func (f *loadFlags) accept() (float64, error) {
	acc, err := brk.ParseAccept(f.Accept)
	if err != nil {
		return 0, refuse("--accept %v", err)
	}
	return acc, nil
}

// http2Flag is the protocol --http2 chooses (given: HTTP/2; the
// default, HTTP/1.1): the CLI's one translation of the flag.
func http2Flag(given bool) brk.Protocol {
	if given {
		return brk.HTTP2
	}
	return brk.HTTP1
}

func (f *loadFlags) target(url string, stdin io.Reader) (brk.Target, error) {
	t := brk.Target{URL: url, Connect: f.Connect, Method: f.Method, ExpectEcho: f.ExpectEcho, Protocol: http2Flag(f.HTTP2),
		TLS: brk.TLSOptions{
			CACert: f.Cacert, Insecure: f.Insecure, Version: f.TLSVersion, Group: f.TLSGroup,
			Cipher: f.TLSCipher, Cert: f.Cert, Key: f.Key,
		}}
	for _, h := range f.Header {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return t, refuse("-H %q: want \"Name: value\"", h)
		}
		t.Headers = append(t.Headers, brk.Header{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)})
	}
	if f.BodyFile != "" {
		var b []byte
		var err error
		if f.BodyFile == "-" {
			b, err = io.ReadAll(stdin)
		} else {
			b, err = os.ReadFile(f.BodyFile)
		}
		if err != nil {
			return t, refuse("--body-file: %v", err)
		}
		if b == nil {
			b = []byte{}
		}
		t.Body = b
	}
	if f.ExpectBody != nil {
		t.ExpectBody = []byte(*f.ExpectBody)
	}
	if f.ExpectStatus != "" {
		for _, s := range strings.Split(f.ExpectStatus, ",") {
			code, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || code < 100 || code > 599 {
				return t, refuse("--expect-status %q: want status codes such as 200,204", f.ExpectStatus)
			}
			t.ExpectStatus = append(t.ExpectStatus, code)
		}
	}
	return t, nil
}

func (c *reqCmd) Run(e *env) error {
	if err := c.refuseUnserved(c.Start, c.Pace); err != nil {
		return err
	}
	c.warn(e.stderr)
	if err := c.checkURL(c.URL); err != nil {
		return err
	}
	t, err := c.target(c.URL, os.Stdin)
	if err != nil {
		return err
	}
	if err := c.targetsFlag.apply(&t, os.Stdin); err != nil {
		return err
	}
	p, err := c.plan(brk.Requests{Conns: c.Conn}, c.Start, c.Pace, c.Max)
	if err != nil {
		return err
	}
	if err := c.shardFlags.apply(&p); err != nil {
		return err
	}
	e.verbose, e.latency, e.tui = c.Verbose, c.Latency, c.TUI
	e.prom = &c.promFlags
	return runTest(e, t, p, c.JSON, c.Report, c.Quiet)
}

// runTest runs the test of p.Load and prints it; shared with demo.
func runTest(e *env, t brk.Target, p brk.Plan, jsonPath, reportPath string, quiet bool) error {
	_, err := runTestResult(e, t, p, jsonPath, reportPath, quiet)
	return err
}

// runTestResult is runTest that also returns the run's result (nil when
// the run was refused).
func runTestResult(e *env, t brk.Target, p brk.Plan, jsonPath, reportPath string, quiet bool) (*brk.Result, error) {
	text := e.stdout
	if jsonPath == "-" {
		text = e.stderr
	}
	// --tui holds the human text while its view owns the terminal; end
	// restores the terminal (on every return, a panic's too) and writes it.
	var live liveRun
	defer live.end()
	text = live.holdText(e, text)
	// Validate everything before creating (and truncating) report files.
	if err := brk.Validate(t, p); err != nil {
		return nil, refuseLib(err)
	}
	// The plan as Run reads it, which the report's words and the
	// Prometheus run id read: the Load's settings also in the older
	// fields, and its test.
	p, err := p.Resolved()
	if err != nil {
		return nil, refuseLib(err)
	}
	mode := p.Mode()
	addTargetSecrets(e.secrets, t)
	feed, err := newPromFeed(e.prom, text, mode, t, p, e.secrets) // the run id, and a push (prometheus.go)
	if err != nil {
		return nil, err
	}
	var jsonFile *reportFile
	if jsonPath != "" && jsonPath != "-" {
		f, err := createReport(jsonPath)
		if err != nil {
			return nil, refuse("--json: %v", err)
		}
		defer f.abort()
		jsonFile = f
	}
	var htmlFile *reportFile
	if reportPath != "" {
		f, err := createReport(reportPath)
		if err != nil {
			return nil, refuse("--report: %v", err)
		}
		defer f.abort()
		htmlFile = f
	}
	started := time.Now()
	obs := live.observer(e, &report.Text{W: text, Test: mode, Target: t, Plan: p, Verbose: e.verbose, DefaultSLA: e.defaultSLA}, quiet)
	res, err := brk.Run(e.ctx, t, p, redacting(e.secrets, feed.observe(obs)))
	live.end() // the rest of the text follows what the view held
	if err != nil {
		return nil, refuseLib(err)
	}
	feed.finish(res, mode, t, p)
	res.Command = commandLine()
	e.secrets.Walk(res) // before the shard's HMAC signs it
	if res.Verdict == brk.VerdictInconclusive && len(res.Phases) == 0 {
		fmt.Fprintf(text, "brk %s test  %s\n", mode, t.Name())
	}
	writeShard(text, res) // a sharded run (shard_flags.go)
	signShard(e, res, p)
	if e.verbose {
		report.WriteSummary(text, res)
	} else {
		report.WriteHeld(text, res)
	}
	if e.latency {
		if err := report.WriteLatency(text, res); err != nil {
			fmt.Fprintf(e.stderr, "brk: --latency: %v\n", err)
		}
	}
	// A requested report that could not be written is named on stderr and
	// turns the exit code into 4 (130 stays 130).
	reportFailed := false
	if jsonPath != "" {
		if err := writeJSON(e, jsonFile, res); err != nil {
			reportFailed = true
			fmt.Fprintf(e.stderr, "brk: the --json report %s could not be written: %v\n", jsonPath, err)
		}
	}
	if htmlFile != nil {
		host, _ := os.Hostname()
		err := report.WriteHTML(&redactWriter{w: htmlFile, sec: e.secrets}, res, report.HTMLConditions{
			Command: e.secrets.String(commandLine()), Host: host, CPUs: runtime.NumCPU(),
			OS: runtime.GOOS, Arch: runtime.GOARCH, Started: started,
		})
		if err == nil {
			err = htmlFile.commit()
		}
		if err != nil {
			reportFailed = true
			fmt.Fprintf(e.stderr, "brk: the --report %s could not be written: %v\n", reportPath, err)
		}
	}
	feed.writeSummary(text, res)
	// The final line is the last stdout line; with --json - it follows the
	// human text on stderr.
	fmt.Fprintln(text, report.FinalLine(res))
	if err := e.stdoutErr(); err != nil && jsonPath != "-" {
		// The human text lost its reader; the run and its report files
		// were finished regardless, and the exit code is the verdict's.
		fmt.Fprintf(e.stderr, "brk: stdout: %v; the text after that was dropped, the run and its report files were finished\n", err)
	}
	e.code = res.Verdict.ExitCode()
	if reportFailed && e.code != exitInterrupted {
		e.code = exitReportFailed
	}
	return res, nil
}

// warn notes on stderr what the flags allow but probably do not mean:
// the library's warnings (brk.AcceptWarning) in flag words.
func (f *loadFlags) warn(w io.Writer) {
	acc, err := f.accept()
	if err != nil {
		return // refused later, with its reason
	}
	if pe := brk.AcceptWarning(brk.Plan{Accept: acc}); pe != nil {
		fmt.Fprintf(w, "brk: warning: %s\n", flagWords(pe))
	}
}

// commandLine is the command as typed, for the reports.
func commandLine() string {
	return strings.Join(append([]string{"brk"}, os.Args[1:]...), " ")
}

// writeJSON writes v as the indented JSON report to file, or to stdout
// when file is nil (--json -), and commits file: renamed into place only
// once complete (reportFile).
func writeJSON(e *env, file *reportFile, v any) error {
	out := io.Writer(e.stdout)
	if file != nil {
		out = &redactWriter{w: file, sec: e.secrets}
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	err := enc.Encode(v)
	if file != nil {
		if err != nil {
			file.abort()
			return err
		}
		err = file.commit()
	}
	return err
}

// ioFlag is --io as Plan.IO: auto is the library's default (empty).
func ioFlag(v string) string {
	if v == "auto" {
		return brk.IOAuto
	}
	return v
}
