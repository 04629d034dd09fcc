// Package e2e holds brk's end-to-end tests: each starts real servers on
// the loopback interface (nginx, the built-in fixture, scripted hostile
// servers from internal/hostile) and runs loads through the exported API
// of package brk, then checks the results against what the servers saw.
//
// The package has no code of its own. Run it without the race detector for
// the largest runs (go test -count=1 ./e2e); .ci/run runs it both ways.
package e2e
