// Package contract is the fixture contract of `brk bench`: how the client
// self-benchmark starts a responder in a child process, learns its address
// and samples its CPU, apart from the client's own.
//
// Any executable that speaks it can stand in for the built-in responder
// (`brk fixture --child`) with `brk bench --fixture-bin PATH`. A Go program
// implements it with Serve and a StartFunc; examples/fixture-nethttp is one
// on net/http's default server. Start is the parent's side.
//
// The wire is newline-delimited JSON, one object per line:
//
//  1. The parent writes one Config line on the child's stdin, e.g.
//     {"protocol":"h1","threads":2,"tls":false,"listen":"127.0.0.1:0",
//     "routes":[{"path":"/plain","status":200,"body":"ok","delay_us":0}]}
//  2. The child answers one Hello line on its stdout once it accepts
//     connections, e.g. {"addr":"127.0.0.1:40123","implementation":"...",
//     "protocol":"h1","tls":false,"threads":2}, or {"error":"why"} and exits
//     non-zero.
//  3. Then, on stdin, {"cmd":"sample"} is answered on stdout with the
//     child's own CPU time so far (getrusage RUSAGE_SELF: every thread of
//     the process, its control thread included), e.g.
//     {"user_us":1200,"system_us":800}; {"cmd":"stop"} makes the child stop
//     accepting, drain the requests in progress, answer {"stopped":true}
//     and exit 0. EOF on stdin does the same without the answer.
//
// Stdout carries nothing else; diagnostics go to stderr only.
package contract

import "time"

// Config is the first line the parent writes on the child's stdin.
type Config struct {
	// Protocol is "h1" (HTTP/1.1), "h2c" (HTTP/2 with prior knowledge) or
	// "h2-tls" (HTTP/2 over TLS, ALPN h2).
	Protocol string `json:"protocol"`
	// Threads is the number of threads the responder may run on at once
	// (GOMAXPROCS for a Go responder); 0 leaves the child's default.
	Threads int `json:"threads"`
	// TLS serves TLS with a certificate of the child's own, named in
	// Hello.CertPEM.
	TLS bool `json:"tls"`
	// Listen is the address to listen on; "127.0.0.1:0" picks a port.
	Listen string `json:"listen"`
	// Routes are what the responder must serve; `brk bench` asks for
	// one: GET /plain answered 200 with the body "ok" at once.
	Routes []Route `json:"routes"`
}

// Route is one path the responder serves: every request to Path is
// answered Status with exactly Body, DelayUs microseconds after it arrived.
type Route struct {
	Path    string `json:"path"`
	Status  int    `json:"status"`
	Body    string `json:"body"`
	DelayUs int64  `json:"delay_us"`
}

// Delay is the route's delay as a duration.
func (r Route) Delay() time.Duration { return time.Duration(r.DelayUs) * time.Microsecond }

// Hello is the child's first line on stdout.
type Hello struct {
	// Addr is the host:port the child accepts connections on.
	Addr string `json:"addr"`
	// Implementation names the responder, e.g. "brk fixture (net/http)".
	Implementation string `json:"implementation"`
	Protocol       string `json:"protocol"`
	TLS            bool   `json:"tls"`
	// Threads is the thread count the responder runs with.
	Threads int `json:"threads"`
	// CertPEM, with TLS, is the PEM certificate (its own authority) the
	// client must trust.
	CertPEM string `json:"cert_pem,omitempty"`
	// Error, when set, is why the child could not start; nothing else in
	// the line counts and the child exits non-zero.
	Error string `json:"error,omitempty"`
}

// Command is a line the parent writes after the Config.
type Command struct {
	Cmd string `json:"cmd"` // "sample" or "stop"
}

// The commands.
const (
	CmdSample = "sample"
	CmdStop   = "stop"
)

// Sample is the answer to a sample command: the child's CPU time since it
// started, in microseconds. The parent takes differences.
type Sample struct {
	UserUs   int64  `json:"user_us"`
	SystemUs int64  `json:"system_us"`
	Stopped  bool   `json:"stopped,omitempty"` // the answer to stop
	Error    string `json:"error,omitempty"`
}

// CPU is a difference of two samples.
type CPU struct {
	User, System time.Duration
}

// Sub returns the CPU time between an earlier sample and s.
func (s Sample) Sub(earlier Sample) CPU {
	return CPU{
		User:   time.Duration(s.UserUs-earlier.UserUs) * time.Microsecond,
		System: time.Duration(s.SystemUs-earlier.SystemUs) * time.Microsecond,
	}
}
