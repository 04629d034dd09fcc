package brk

import (
	"fmt"
	"slices"
)

// PlanError is a Plan or Target that the library refuses before any
// traffic: the only error RunMode, Run, RunConnections, RunRate, AB, RunAB and
// Check return (besides CheckPlatform's). Its Error names the fields it
// refuses as Go selectors from the argument that holds them, such as
// "Plan.Start (5) is above Plan.Max (3)" or "Target.TLS.Version "1.1":
// want 1.2 or 1.3". A program that took the values from elsewhere (a
// command line, a configuration file) words the same refusal with its own
// names for the fields: Reword.
type PlanError struct {
	// Fields are the fields the refusal names, in the order it names
	// them, the refused one first: "Plan.Conns", "Target.URL",
	// "Target.TLS.CACert", "Plan.Shard.Coordinator", ... Empty for a
	// refusal that names no field (an unknown Mode, a request the HTTP
	// encoder cannot write).
	Fields []string

	format string
	args   []any // a field among them is worded by Reword
}

// field is a field a PlanError names, as a Go selector.
type field string

// Error is the refusal in the library's words.
func (e *PlanError) Error() string { return e.Reword(nil) }

// Reword is the refusal with name(f) in place of each field f of Fields;
// a field for which name is nil or returns "" keeps its Go selector.
func (e *PlanError) Reword(name func(field string) string) string {
	args := make([]any, len(e.args))
	for i, a := range e.args {
		if f, ok := a.(field); ok {
			s := string(f)
			if name != nil {
				if n := name(s); n != "" {
					s = n
				}
			}
			a = s
		}
		args[i] = a
	}
	return fmt.Sprintf(e.format, args...)
}

// refuse is a PlanError; each field among args is named with %s in
// format.
func refuse(format string, args ...any) *PlanError {
	e := &PlanError{format: format, args: args}
	for _, a := range args {
		if f, ok := a.(field); ok && !slices.Contains(e.Fields, string(f)) {
			e.Fields = append(e.Fields, string(f))
		}
	}
	return e
}

// renamed is e with each field of names in its place (a Load's settings,
// refused by the checks that read them in the plan's older fields:
// resolveLoad); e itself for no names or for an error that is not a
// *PlanError.
func renamed(err error, names map[field]field) error {
	e, ok := err.(*PlanError)
	if !ok || len(names) == 0 {
		return err
	}
	args := make([]any, len(e.args))
	for i, a := range e.args {
		if f, ok := a.(field); ok {
			if n, ok := names[f]; ok {
				a = n
			}
		}
		args[i] = a
	}
	return refuse(e.format, args...)
}

// The fields a PlanError names.
const (
	fConns      field = "Plan.Conns"
	fStart      field = "Plan.Start"
	fPace       field = "Plan.Pace"
	fMax        field = "Plan.Max"
	fPhase      field = "Plan.Phase"
	fTimeout    field = "Plan.Timeout"
	fAccept     field = "Plan.Accept"
	fThreads    field = "Plan.Threads"
	fIO         field = "Plan.IO"
	fBaseline   field = "Plan.Baseline"
	fRequests   field = "Plan.Requests"
	fKeepAlive  field = "Plan.KeepAlive"
	fMaxP99     field = "Plan.MaxP99"
	fMaxP999    field = "Plan.MaxP999"
	fRefine     field = "Plan.Refine"
	fRepeat     field = "Plan.Repeat"
	fServerPIDs field = "Plan.ServerPIDs"
	fRateDepth  field = "Plan.RateDepth"
	fArrivals   field = "Plan.Arrivals"
	fSeed       field = "Plan.Seed"
	fLoad       field = "Plan.Load"
	fRamp       field = "Plan.Ramp"
	fSearch     field = "Plan.Search"
	fGrowth     field = "Plan.Search.Growth"
	fResolution field = "Plan.Search.Resolution"
	fResPct     field = "Plan.Search.ResolutionPct"
	fBudget     field = "Plan.Budget"

	fShard            field = "Plan.Shard"
	fShardCoordinator field = "Plan.Shard.Coordinator"
	fShardToken       field = "Plan.Shard.Token"
	fShardStartAt     field = "Plan.Shard.StartAt"
	fShardListen      field = "Plan.Shard.Listen"
	fShardTolerance   field = "Plan.Shard.Tolerance"
	fShardAllowance   field = "Plan.Shard.Allowance"
	fShardJoinTimeout field = "Plan.Shard.JoinTimeout"

	fURL          field = "Target.URL"
	fConnect      field = "Target.Connect"
	fHeaders      field = "Target.Headers"
	fBody         field = "Target.Body"
	fExpectStatus field = "Target.ExpectStatus"
	fExpectBody   field = "Target.ExpectBody"
	fExpectEcho   field = "Target.ExpectEcho"
	fTLS          field = "Target.TLS"
	fCACert       field = "Target.TLS.CACert"
	fInsecure     field = "Target.TLS.Insecure"
	fTLSVersion   field = "Target.TLS.Version"
	fTLSGroup     field = "Target.TLS.Group"
	fTLSCipher    field = "Target.TLS.Cipher"
	fCert         field = "Target.TLS.Cert"
	fKey          field = "Target.TLS.Key"
	fNoResume     field = "Target.TLS.NoResume"
)
