package shard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// accept (shard 0) takes shards until the run starts.
func (p *Lockstep) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		go p.admit(c)
	}
}

// admit authenticates one shard's connection and registers it; a refused
// shard is told why and closed.
func (p *Lockstep) admit(c net.Conn) {
	c.SetDeadline(time.Now().Add(handshakeTimeout))
	cn := nonce()
	if writeFrame(c, &message{Type: msgChallenge, Nonce: cn}, 0) != nil {
		c.Close()
		return
	}
	h, err := readFrame(c, helloLimit)
	if err != nil || h.Type != msgHello {
		c.Close()
		return
	}
	refuse := func(reason string) {
		writeFrame(c, &message{Type: msgRefused, Reason: reason}, 0)
		c.Close()
	}
	var startMs int64
	if !p.cfg.StartAt.IsZero() {
		startMs = p.cfg.StartAt.UnixMilli()
	}
	switch {
	case len(h.Nonce) != 32:
		refuse("a malformed hello: its nonce is not 32 hex digits")
		return
	case !macOK(h.MAC, helloMAC(p.cfg.Token, cn, h)):
		refuse(helloRefusal(p.cfg.Token, cn, h))
		return
	case h.Count != p.cfg.Spec.Count:
		refuse(fmt.Sprintf("shard count %d differs from the coordinator's %d", h.Count, p.cfg.Spec.Count))
		return
	case h.Plan != p.cfg.PlanHash:
		refuse("the shard's plan differs from the coordinator's (plan hash " + short(h.Plan) + " vs " + short(p.cfg.PlanHash) + ")")
		return
	case h.StartAtMs != startMs:
		refuse(fmt.Sprintf("the shard's start time (%d ms) differs from the coordinator's (%d ms)", h.StartAtMs, startMs))
		return
	case h.Index < 1 || h.Index >= p.cfg.Spec.Count:
		refuse(fmt.Sprintf("shard index %d is not one of 1..%d (0 is the coordinator)", h.Index, p.cfg.Spec.Count-1))
		return
	}
	q := &peer{index: h.Index, conn: c,
		out: &sealer{key: sessionKey(p.cfg.Token, cn, h.Nonce, toShard)},
		in:  &opener{key: sessionKey(p.cfg.Token, cn, h.Nonce, toCoordinator), from: fmt.Sprintf("shard %d", h.Index)}}
	p.mu.Lock()
	switch {
	case p.started:
		p.mu.Unlock()
		refuse("the run has already started")
		return
	case p.peers[h.Index] != nil:
		p.mu.Unlock()
		refuse(fmt.Sprintf("duplicate shard index %d: another shard already joined as %d", h.Index, h.Index))
		return
	}
	p.peers[h.Index] = q
	q.mu.Lock() // the welcome goes out before any broadcast
	p.mu.Unlock()
	err = writeSealed(c, q.out, &message{Type: msgWelcome, MAC: welcomeMAC(p.cfg.Token, cn, h.Nonce)}, 0)
	q.mu.Unlock()
	c.SetDeadline(time.Time{})
	if err != nil {
		p.post(event{index: h.Index, err: err})
		return
	}
	p.post(event{index: h.Index, m: &message{Type: msgJoined}})
	for {
		m, err := readSealed(c, q.in, maxFrame)
		if err != nil {
			p.post(event{index: h.Index, err: err})
			return
		}
		p.post(event{index: h.Index, m: m})
	}
}

// helloRefusal names why hello h fails authentication against this
// connection's challenge cn. A hello whose MAC holds under the
// coordinator's token for the challenge it says it answers, another one,
// was made by a shard with this token on another connection (an earlier
// attempt, another run) and replayed here; any other failure is a token
// that differs (or a forged hello, which cannot be told from it).
func helloRefusal(token, cn string, h *message) string {
	if h.Challenge != "" && h.Challenge != cn && macOK(h.MAC, helloMAC(token, h.Challenge, h)) {
		return "a replayed hello: it answers another connection's challenge (recorded from an earlier connection or run), not this one's; the token is the same"
	}
	return "authentication failed: the shard's BRK_TOKEN differs from the coordinator's"
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// dial (shards 1..N-1) connects to the coordinator, retrying until the
// join deadline (the coordinator may start after this shard), and
// authenticates both ways.
func (p *Lockstep) dial(ctx context.Context) error {
	deadline := time.Now().Add(p.cfg.JoinTimeout)
	if !p.cfg.StartAt.IsZero() {
		deadline = p.cfg.StartAt.Add(p.cfg.Tolerance)
	}
	var last error
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			if last == nil {
				// Too late before a first attempt: no dial error to give.
				why := "the join timeout " + p.cfg.JoinTimeout.String()
				if !p.cfg.StartAt.IsZero() {
					why = fmt.Sprintf("the start at %s + the start tolerance %s", p.cfg.StartAt.UTC().Format("15:04:05.000"), p.cfg.Tolerance)
				}
				return fmt.Errorf("shard %d is too late to join the coordinator at %s: the join deadline (%s) passed at %s, before its first attempt",
					p.cfg.Spec.Index, p.cfg.Addr, why, deadline.UTC().Format("15:04:05.000"))
			}
			return fmt.Errorf("could not join the coordinator at %s before the join deadline: %v", p.cfg.Addr, last)
		}
		d := net.Dialer{Timeout: time.Second}
		c, err := d.DialContext(ctx, "tcp", p.cfg.Addr)
		if err == nil {
			var refused bool
			if refused, err = p.handshake(c); err == nil {
				p.conn = c
				go p.read()
				return nil
			}
			c.Close()
			if refused {
				return err
			}
		}
		last = err
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// handshake answers the challenge; refused is set when the coordinator
// refused this shard (not worth retrying).
func (p *Lockstep) handshake(c net.Conn) (refused bool, err error) {
	c.SetDeadline(time.Now().Add(handshakeTimeout))
	defer c.SetDeadline(time.Time{})
	ch, err := readFrame(c, helloLimit)
	if err != nil {
		return false, err
	}
	if ch.Type != msgChallenge || len(ch.Nonce) != 32 {
		return true, errors.New("the coordinator spoke an unknown protocol")
	}
	h := &message{Type: msgHello, Index: p.cfg.Spec.Index, Count: p.cfg.Spec.Count, Plan: p.cfg.PlanHash,
		Challenge: ch.Nonce, Nonce: nonce()}
	if !p.cfg.StartAt.IsZero() {
		h.StartAtMs = p.cfg.StartAt.UnixMilli()
	}
	h.MAC = helloMAC(p.cfg.Token, ch.Nonce, h)
	if err := writeFrame(c, h, 0); err != nil {
		return false, err
	}
	b, err := readRaw(c, helloLimit)
	if err != nil {
		return false, err
	}
	if len(b) > 0 && b[0] == '{' { // a plain frame: the coordinator refused this shard
		w, err := decode(b)
		if err != nil || w.Type != msgRefused {
			return true, errors.New("the coordinator failed authentication: its BRK_TOKEN differs")
		}
		return true, fmt.Errorf("the coordinator refused shard %d: %s", p.cfg.Spec.Index, trim(w.Reason))
	}
	in := &opener{key: sessionKey(p.cfg.Token, ch.Nonce, h.Nonce, toShard), from: "the coordinator"}
	if b, err = in.open(b); err != nil {
		var fe *FrameError
		if errors.As(err, &fe) && in.seq == 0 && strings.Contains(fe.Msg, "failed authentication") {
			return true, errors.New("the coordinator failed authentication: its BRK_TOKEN differs")
		}
		return true, fmt.Errorf("shard %d: %v", p.cfg.Spec.Index, err)
	}
	w, err := decode(b)
	if err != nil || w.Type != msgWelcome || !macOK(w.MAC, welcomeMAC(p.cfg.Token, ch.Nonce, h.Nonce)) {
		return true, errors.New("the coordinator failed authentication: its BRK_TOKEN differs")
	}
	p.in, p.out = in, &sealer{key: sessionKey(p.cfg.Token, ch.Nonce, h.Nonce, toCoordinator)}
	return false, nil
}

// read (shards 1..N-1) turns the coordinator's frames into events.
func (p *Lockstep) read() {
	for {
		m, err := readSealed(p.conn, p.in, maxFrame)
		if err != nil {
			p.post(event{err: err})
			return
		}
		p.post(event{m: m})
	}
}

// begin starts phase 0's clock. Shard 0 waits for every shard to join
// (until StartAt + Tolerance, or JoinTimeout), picks the start when none
// was given and announces it; another shard waits for that announcement.
func (p *Lockstep) begin(ctx context.Context) error {
	if p.ln == nil {
		deadline := time.Now().Add(p.cfg.JoinTimeout + p.cfg.Lead + p.cfg.Tolerance)
		if !p.cfg.StartAt.IsZero() {
			deadline = p.cfg.StartAt.Add(p.cfg.Tolerance)
		}
		t := time.NewTimer(max(time.Until(deadline), 0))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return fmt.Errorf("shard %d was interrupted before the start", p.cfg.Spec.Index)
			case <-t.C:
				return errors.New("the coordinator did not announce the start in time")
			case ev := <-p.events:
				if ev.err == nil && ev.m.Type == msgStart {
					p.start = time.UnixMilli(ev.m.StartAtMs)
					if !p.cfg.StartAt.IsZero() && !p.start.Equal(p.cfg.StartAt) {
						return errors.New("the coordinator announced another start time")
					}
					return nil
				}
				return p.handle(ev, 0, 0)
			}
		}
	}
	deadline := time.Now().Add(p.cfg.JoinTimeout)
	if !p.cfg.StartAt.IsZero() {
		deadline = p.cfg.StartAt.Add(p.cfg.Tolerance)
	}
	t := time.NewTimer(max(time.Until(deadline), 0))
	defer t.Stop()
	for p.joined < p.cfg.Spec.Count-1 {
		select {
		case <-ctx.Done():
			return errors.New("shard 0 was interrupted before the start")
		case <-t.C:
			p.mu.Lock()
			var missing []int
			for i := 1; i < p.cfg.Spec.Count; i++ {
				if p.peers[i] == nil {
					missing = append(missing, i)
				}
			}
			p.started = true
			p.mu.Unlock()
			return fmt.Errorf("shard(s) %v did not join the coordinator in time: the run is inconclusive", missing)
		case ev := <-p.events:
			if err := p.handle(ev, 0, -1); err != nil {
				return err
			}
		}
	}
	p.mu.Lock()
	p.started = true
	p.mu.Unlock()
	p.start = p.cfg.StartAt
	if p.start.IsZero() {
		p.start = time.UnixMilli(time.Now().Add(p.cfg.Lead).UnixMilli())
	}
	p.broadcast(&message{Type: msgStart, StartAtMs: p.start.UnixMilli()})
	return nil
}
