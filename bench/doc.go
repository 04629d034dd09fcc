// Package bench holds brk's fixture responder, the demo wiring and the
// client self-benchmark (`brk bench`: Matrix, Run, the CSV in csv.go), whose
// responder child speaks the fixture contract of package bench/contract
// (ServeChild is the built-in side, `brk fixture --child`).
//
// The fixture responder (StartFixture, ServeFixture) is a small net/http
// HTTP/1.1 server with a fixed set of routes (/plain, /hello, /json, /echo,
// /chunked, /delay, /status). It can model a server of limited capacity:
// with FixtureConfig.Capacity = K and a service time D, at most K requests
// are in service at once and the rest wait in FIFO order, so with C requests
// outstanding the latency approaches C·D/K and the throughput K/D
// (Little's law). With FixtureConfig.TLS it serves HTTPS with an ephemeral
// self-signed certificate, and StartFixtureProcess runs it as a child
// process (`brk fixture`) so that it does not share the client's Go runtime.
package bench
