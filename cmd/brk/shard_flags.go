package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/brk-bench/brk"
)

// shardFlags run one plan on several load boxes (the requests,
// connections and rate tests): see docs/shards.md ("Beyond one box").
type shardFlags struct {
	Shard             string        `help:"Run shard I of N of the plan: the shards split the connections (and the rate test's arrivals), phases run in step, one verdict on the merged measurements." placeholder:"I/N"`
	Shards            int           `help:"Shard count N, the index I from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job)." placeholder:"N"`
	Coordinator       string        `help:"Shard 0 listens here and coordinates, the others connect; the shared token is the environment variable BRK_TOKEN." placeholder:"HOST:PORT"`
	CoordinatorListen string        `name:"coordinator-listen" help:"Shard 0's listen address (default: --coordinator)." placeholder:"ADDR"`
	StartAt           string        `name:"start-at" help:"Every shard starts phase 0 at T (RFC 3339 or Unix milliseconds); default: the coordinator picks T once every shard joined. Without --coordinator every shard runs every phase of a linear ramp (--pace, --max) from T unjudged, and brk merge of the reports judges." placeholder:"T"`
	StartTolerance    time.Duration `name:"start-tolerance" default:"1s" help:"A shard that starts a phase later than this after its boundary fails closed (exit 3)."`
	DrainAllowance    time.Duration `name:"drain-allowance" help:"Time after each phase's admission before the next phase's boundary (default: --timeout + 1s)." placeholder:"DURATION"`
	JoinTimeout       time.Duration `name:"join-timeout" default:"2m" help:"Without --start-at, how long shard 0 waits for every shard to join."`
}

// apply makes p a shard's plan; the error is a usage error (exit 2).
func (f *shardFlags) apply(p *brk.Plan) error {
	sharded := f.Shard != "" || f.Shards != 0
	if !sharded {
		if f.Coordinator != "" || f.CoordinatorListen != "" || f.StartAt != "" || f.DrainAllowance != 0 {
			return refuse("--coordinator, --coordinator-listen, --start-at and --drain-allowance need --shard I/N or --shards N")
		}
		return nil
	}
	var index, count int
	var err error
	switch {
	case f.Shard != "" && f.Shards != 0:
		return refuse("give --shard I/N or --shards N (with JOB_COMPLETION_INDEX), not both")
	case f.Shard != "":
		if index, count, err = brk.ParseShard(f.Shard); err != nil {
			return refuse("--%v", err) // the library's "shard "x": want I/N" is the flag's
		}
	default:
		index, count, err = brk.ShardFromEnv(f.Shards)
		if errors.Is(err, brk.ErrNoShardIndex) {
			return refuse("--shards %d needs %s (set by a Kubernetes Indexed Job) or --shard I/N", f.Shards, "JOB_COMPLETION_INDEX")
		}
		if err != nil {
			return refuse("--shards: %v", err)
		}
	}
	s := &brk.Sharding{Index: index, Count: count, Coordinator: f.Coordinator, Listen: f.CoordinatorListen,
		Token: os.Getenv("BRK_TOKEN"), Tolerance: f.StartTolerance, Allowance: f.DrainAllowance, JoinTimeout: f.JoinTimeout}
	if f.StartAt != "" {
		if s.StartAt, err = brk.ParseStartAt(f.StartAt); err != nil {
			return refuse("--start-at: %v", err)
		}
	}
	if f.StartTolerance <= 0 {
		return refuse("--start-tolerance must be positive")
	}
	p.Shard = s
	return nil
}

// writeShard says, before the summary, which shard this was and how late
// each shard started its phases (shard 0 knows every shard's).
func writeShard(w io.Writer, res *brk.Result) {
	s := res.Shard
	if s == nil {
		return
	}
	start := s.StartAt
	if start == "" {
		start = "(never started)"
	}
	fmt.Fprintf(w, "\nshard %d/%d, phase 0 at %s: started %.1f ms late (latest phase start %.1f ms late)\n",
		s.Index, s.Count, start, s.StartLatenessMs, s.MaxLatenessMs)
	if s.Unjudged {
		fmt.Fprintf(w, "shard %d/%d ran without a coordinator and judges nothing: the verdict is brk merge's, of every shard's --json report\n", s.Index, s.Count)
	}
	for _, o := range res.Shards {
		if o.Index != s.Index {
			fmt.Fprintf(w, "shard %d/%d: started %.1f ms late (latest phase start %.1f ms late)\n",
				o.Index, s.Count, o.StartLatenessMs, o.MaxLatenessMs)
		}
	}
}

// signShard sets a shard's report HMAC under BRK_TOKEN (brk merge checks
// it), after everything the report holds is set.
func signShard(e *env, res *brk.Result, p brk.Plan) {
	if res.Shard == nil || p.Shard == nil || p.Shard.Token == "" {
		return
	}
	if err := res.Sign(p.Shard.Token); err != nil {
		fmt.Fprintf(e.stderr, "brk: the shard report could not be signed: %v\n", err)
	}
}

// verifyShards checks each shard report's HMAC under BRK_TOKEN; without
// the token it says that the reports were not verified (verified false).
func verifyShards(raws [][]byte, paths []string) (verified bool, err error) {
	token := os.Getenv("BRK_TOKEN")
	if token == "" {
		return false, nil
	}
	for i, b := range raws {
		if err := brk.VerifyReport(b, token); err != nil {
			if errors.Is(err, brk.ErrUnsigned) {
				return false, refuse("%s: the report carries no HMAC: with BRK_TOKEN set, brk merge takes only signed shard reports", paths[i])
			}
			return false, refuse("%s: %v", paths[i], err)
		}
	}
	return true, nil
}
