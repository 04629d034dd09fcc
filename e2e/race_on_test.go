//go:build race

package e2e

// raceEnabled: the race detector slows crypto about tenfold, so the
// largest TLS runs are made without it (see .ci/run).
const raceEnabled = true
