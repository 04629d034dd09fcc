//go:build race

package brk_test

// raceEnabled: the race detector slows crypto about tenfold, so the
// largest TLS runs are made without it (see .ci/run).
const raceEnabled = true
