// Package judge turns what a phase measured into a verdict and chooses the
// next level. It does no I/O and starts no goroutine. Every rule is a
// function of its arguments; only the Ramp reads the clock, for the budget.
//
// What it holds:
//   - Measurement: one phase's merged counts, mergeable across load boxes
//     (measure.go).
//   - Judge: a phase's verdict and the reason (verdict.go), with the
//     mistake rule (mistake.go) and the stream-limit rule (limit.go).
//   - Examine: the evidence beside a verdict, its margins and stalls
//     (evidence.go).
//   - Decide: the next level of a ramp or a search, with confirmation of a
//     pair (levels.go, confirm.go) and the break's interval (interval.go,
//     breakfit.go).
//   - Ramp: the run's phases one step at a time. It asks a Phaser to run
//     each phase; internal/sched's Engine is one, a sharded run's
//     coordinator another (ramp.go).
//   - Mode, Plan, Accept and Names: the test modes' words and planning,
//     a run's schedule, the success share and the settings' names.
//
// The engine's side of a test mode (its admission policy and how a level
// is split over workers) is a value of internal/sched's Load.
package judge
