package main

import "github.com/brk-bench/brk"

// flagNames words the library's fields (brk.PlanError.Fields) as the
// command line's flags. The library owns every rule and words its
// refusals with its Go field names ("Plan.Start (5) is above Plan.Max
// (3)"); brk prints the same refusal with these names ("--start (5) is
// above --max (3)"). A few fields have no flag of their own: the URL is
// the argument (its refusals read "bad URL ..."), TLS the https:// flags
// together, the shard's token the environment variable.
var flagNames = map[string]string{
	"Plan.Conns":      "--conn",
	"Plan.Start":      "--start",
	"Plan.Pace":       "--pace",
	"Plan.Max":        "--max",
	"Plan.Phase":      "--phase",
	"Plan.Timeout":    "--timeout",
	"Plan.Accept":     "--accept",
	"Plan.Threads":    "--threads",
	"Plan.IO":         "--io",
	"Plan.Baseline":   "--baseline",
	"Plan.Requests":   "--requests",
	"Plan.KeepAlive":  "--keep-alive",
	"Plan.MaxP99":     "--max-p99",
	"Plan.MaxP999":    "--max-p999",
	"Plan.Refine":     "--refine",
	"Plan.Repeat":     "--repeat",
	"Plan.ServerPIDs": "--server-pid",
	"Plan.RateDepth":  "--rate-depth",
	"Plan.Arrivals":   "--arrivals",
	"Plan.Seed":       "--seed",
	"Plan.Load":       "the test (brk, brk conn, brk rate)",
	"Plan.Ramp":       "the search (no --pace)",

	// A Plan.Load's fields (brk.Requests, brk.Connections, brk.Rate).
	"Requests.Conns":        "--conn",
	"Connections.Requests":  "--requests",
	"Connections.KeepAlive": "--keep-alive",
	"Rate.Conns":            "--conn",
	"Rate.Depth":            "--rate-depth",
	"Rate.Arrivals":         "--arrivals",
	"Rate.Seed":             "--seed",

	// A Plan.Ramp's fields (brk.Linear, brk.Search).
	"Linear.Pace":          "--pace",
	"Linear.Refine":        "--refine",
	"Search.Growth":        "--growth",
	"Search.Resolution":    "--resolution",
	"Search.ResolutionPct": "--resolution",

	"Plan.Search":               "the search (no --pace)",
	"Plan.Names":                "the reasons' names of the flags (set by brk itself)",
	"Plan.Search.Growth":        "--growth",
	"Plan.Search.Resolution":    "--resolution",
	"Plan.Search.ResolutionPct": "--resolution",
	"Plan.Budget":               "--budget",

	"Plan.Shard":             "--shard",
	"Plan.Shard.Index":       "--shard",
	"Plan.Shard.Count":       "--shard",
	"Plan.Shard.Coordinator": "--coordinator",
	"Plan.Shard.Listen":      "--coordinator-listen",
	"Plan.Shard.Token":       "the shared token in the environment variable BRK_TOKEN",
	"Plan.Shard.StartAt":     "--start-at",
	"Plan.Shard.Tolerance":   "--start-tolerance",
	"Plan.Shard.Allowance":   "--drain-allowance",
	"Plan.Shard.JoinTimeout": "--join-timeout",

	"Target.URL":          "bad URL",
	"Target.Connect":      "--connect",
	"Target.Method":       "--method",
	"Target.Headers":      "-H",
	"Target.Body":         "--body-file",
	"Target.ExpectStatus": "--expect-status",
	"Target.ExpectBody":   "--expect-body",
	"Target.ExpectEcho":   "--expect-echo",
	"Target.Protocol":     "--http2",
	"Target.HTTP2":        "--http2",
	"Target.Mix":          "--targets",
	"Target.TLS":          "TLS",
	"Target.TLS.CACert":   "--cacert",
	"Target.TLS.Insecure": "--insecure",
	"Target.TLS.Version":  "--tls-version",
	"Target.TLS.Group":    "--tls-group",
	"Target.TLS.Cipher":   "--tls-cipher",
	"Target.TLS.Cert":     "--cert",
	"Target.TLS.Key":      "--key",
	"Target.TLS.NoResume": "--no-resume",
}

// reasonNames are the names the library's reasons give the settings they
// suggest (brk.Plan.Names): the flags of flagNames, so that a reason
// reads "is below --accept 99.99%" where a program that calls the
// library reads "is below Plan.Accept 99.99%". Every command that runs a
// test (its plan: loadFlags.plan) or merges shard reports gives them.
func reasonNames() brk.Names {
	return brk.Names{
		Accept: flagNames["Plan.Accept"], MaxP99: flagNames["Plan.MaxP99"], MaxP999: flagNames["Plan.MaxP999"],
		Threads: flagNames["Plan.Threads"], Max: flagNames["Plan.Max"], Conns: flagNames["Plan.Conns"],
		Timeout: flagNames["Plan.Timeout"], ExpectStatus: flagNames["Target.ExpectStatus"],
		CACert: flagNames["Target.TLS.CACert"] + " FILE", Insecure: flagNames["Target.TLS.Insecure"],
		Shard: flagNames["Plan.Shard"] + " and --json",
	}
}

// flagWords is a library error as brk prints it: a *brk.PlanError worded
// with the flags, any other error (a wrapped one included: its wrapping
// text would be lost) as it is.
func flagWords(err error) string {
	if pe, ok := err.(*brk.PlanError); ok {
		return pe.Reword(func(field string) string { return flagNames[field] })
	}
	return err.Error()
}

// refuseLib is refuse for an error of the library: exit 2, in flag words.
func refuseLib(err error) error { return refuse("%s", flagWords(err)) }
