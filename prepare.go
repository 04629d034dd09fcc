package brk

import (
	"crypto/tls"

	"github.com/brk-bench/brk/h1"
	"github.com/brk-bench/brk/h2"
	"github.com/brk-bench/brk/sched"
)

// prepared is a validated target and plan.
type prepared struct {
	plan     Plan
	accept   sched.Accept
	hostport string // dial address text
	template *h1.Template
	h2       *h2.Template // with Target.HTTP2
	mix      *preparedMix // with Target.Mix (mix_run.go); template and h2 are then nil
	replay   bool
	statusOK func(int) bool
	tls      *tls.Config
}

// prepare validates p (with its defaults filled in) and t, in that order,
// and encodes t's request; the error is a *PlanError.
func prepare(t *Target, p Plan, m Mode) (*prepared, error) {
	p.DefaultsFor(m)
	pr := &prepared{plan: p}
	var err error
	if pr.accept, err = validatePlan(p, m); err != nil {
		return nil, err
	}
	raw := t.URL
	if len(t.Mix) > 0 { // a request mix (mix_run.go)
		if err := checkMixTarget(t); err != nil {
			return nil, err
		}
		raw = t.Mix[0].URL
	}
	u, cfg, err := parseTargetURL(raw, t.TLS)
	if err != nil {
		return nil, err
	}
	pr.tls = cfg
	if pr.hostport, err = dialAddress(u, t.Connect); err != nil {
		return nil, err
	}
	if t.HTTP2 && cfg != nil {
		cfg.NextProtos = []string{"h2"}
	}
	if len(t.Mix) > 0 {
		if pr.mix, err = prepareMix(t, u); err != nil {
			return nil, err
		}
	} else if pr.template, pr.replay, err = encodeRequest(t, u); err != nil {
		return nil, err
	} else if t.HTTP2 {
		if pr.h2, err = encodeRequestH2(t, u); err != nil {
			return nil, err
		}
	}
	if pr.statusOK, err = statusCheck(t.ExpectStatus); err != nil {
		return nil, err
	}
	return pr, nil
}
