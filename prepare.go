package brk

import (
	"crypto/tls"
	"net/url"

	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/sched"
)

// prepared is a validated target and plan.
type prepared struct {
	plan     Plan
	accept   judge.Accept
	hostport string               // dial address text
	proto    Protocol             // Target.Proto()
	session  func() sched.Session // the engine's session constructor: proto's, over the target's templates or the mix's
	mix      *preparedMix         // with Target.Mix (mix_run.go)
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
	pr.proto = t.Proto()
	if cfg != nil {
		cfg.NextProtos = pr.proto.ALPN()
	}
	if len(t.Mix) > 0 {
		if pr.mix, err = prepareMix(t, u, pr.proto); err != nil {
			return nil, err
		}
		pr.session = pr.mix.tmpls.sessions()
	} else if pr.session, pr.replay, err = prepareTemplate(t, u, pr.proto); err != nil {
		return nil, err
	}
	if pr.statusOK, err = statusCheck(t.ExpectStatus); err != nil {
		return nil, err
	}
	return pr, nil
}

// prepareTemplate encodes t's request to u once, for HTTP/1.1 first (the
// validation every protocol shares, and whether followers of a closing
// response may be replayed), then as protocol's template; it returns the
// constructor of protocol's sessions that send it.
func prepareTemplate(t *Target, u *url.URL, protocol Protocol) (session func() sched.Session, replay bool, err error) {
	t1, replay, err := encodeRequest(t, u)
	if err != nil {
		return nil, false, err
	}
	tmpls := protocol.templates()
	if err := tmpls.add(t, u, t1); err != nil {
		return nil, false, err
	}
	return tmpls.sessions(), replay, nil
}
