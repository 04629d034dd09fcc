package brk

import (
	"fmt"
	"net/url"
	"slices"

	"github.com/brk-bench/brk/internal/h1"
	"github.com/brk-bench/brk/internal/h2"
	"github.com/brk-bench/brk/internal/sched"
)

// Protocol is the protocol a Target speaks: HTTP1 (the zero value) or
// HTTP2. It is chosen once: one table holds what each protocol decides
// (its name in the reports, its ALPN offer over TLS, the rate test's
// default depth, the words for a requests-test level, its request
// templates and the sessions that send them), and callers read it
// through Protocol's methods rather than ask which protocol it is. Two
// Protocols are equal when they are the same protocol.
type Protocol struct{ d *protocolDef }

// The protocols.
var (
	// HTTP1 speaks HTTP/1.1: over https:// ALPN offers http/1.1. It is
	// Protocol's zero value.
	HTTP1 = Protocol{}
	// HTTP2 speaks HTTP/2: over https:// ALPN offers only h2 (a server
	// that does not select it fails the setup); over http:// each
	// connection starts with the prior-knowledge preface (h2c).
	HTTP2 = Protocol{&http2Def}
)

// protocols are the protocols ProtocolNamed knows.
var protocols = []Protocol{HTTP1, HTTP2}

// protocolDef is what a protocol decides; read through Protocol's methods.
type protocolDef struct {
	name  string   // Result.Protocol: the JSON report's "protocol"
	title string   // its name for people
	note  string   // what the text report's header says after the target ("": nothing)
	alpn  []string // the ALPN offer over TLS
	// selects is the protocol the TLS server must select by ALPN ("":
	// any, or none).
	selects   string
	rateDepth int // the rate test's default depth per connection
	// unit is a requests-test level's unit on a connection of depth d
	// outstanding requests ("pipelined request", "stream").
	unit    func(d int) string
	inOrder bool // a connection answers its requests in the order written
	// hashedHTTP2 is the shard plan hash's HTTP2 field (targetHash).
	hashedHTTP2 bool
	// templates is a new, empty list of the protocol's request templates.
	templates func() templates
}

var http1Def = protocolDef{
	name: "http/1.1", title: "HTTP/1.1", alpn: []string{"http/1.1"}, rateDepth: 1, inOrder: true,
	unit: func(d int) string {
		if d == 1 {
			return "request"
		}
		return "pipelined request"
	},
	templates: func() templates {
		return &templateList[h1.Template]{
			encode:  func(_ *Target, _ *url.URL, t1 *h1.Template) (*h1.Template, error) { return t1, nil },
			session: func(ts []*h1.Template) sched.Session { return h1.NewSession(ts...) },
		}
	},
}

var http2Def = protocolDef{
	name: "h2", title: "HTTP/2 (h2)", note: "over HTTP/2 (h2)", alpn: []string{"h2"}, selects: "h2", rateDepth: 128,
	unit:        func(int) string { return "stream" },
	hashedHTTP2: true,
	templates: func() templates {
		return &templateList[h2.Template]{
			encode:  func(t *Target, u *url.URL, _ *h1.Template) (*h2.Template, error) { return encodeRequestH2(t, u) },
			session: func(ts []*h2.Template) sched.Session { return h2.NewSession(ts...) },
		}
	},
}

func (p Protocol) def() *protocolDef {
	if p.d == nil {
		return &http1Def
	}
	return p.d
}

// ProtocolNamed is the protocol a report names (Result.Protocol,
// Plan.Protocol: "http/1.1" or "h2"), and false for any other name ("",
// a report that names none, included): HTTP1 then.
func ProtocolNamed(name string) (Protocol, bool) {
	for _, p := range protocols {
		if p.Name() == name {
			return p, true
		}
	}
	return HTTP1, false
}

// Proto is the protocol t speaks: t.Protocol, or HTTP2 when the
// deprecated t.HTTP2 is set (whatever t.Protocol says). It is resolved
// here once; the rest of brk reads t.Proto(), never t.HTTP2.
func (t Target) Proto() Protocol {
	if t.HTTP2 {
		return HTTP2
	}
	return t.Protocol
}

// Name is the protocol as the reports name it: "http/1.1" or "h2" (the
// JSON report's "protocol").
func (p Protocol) Name() string { return p.def().name }

// String is p's Name.
func (p Protocol) String() string { return p.Name() }

// Title is the protocol's name for people: "HTTP/1.1" or "HTTP/2 (h2)".
func (p Protocol) Title() string { return p.def().title }

// HeaderNote is what the text report's header says after the target:
// "over HTTP/2 (h2)", or "" for HTTP/1.1, which it does not name.
func (p Protocol) HeaderNote() string { return p.def().note }

// ALPN is the protocol's ALPN offer over TLS: ["http/1.1"] or ["h2"]
// (a copy: the caller may keep it).
func (p Protocol) ALPN() []string { return slices.Clone(p.def().alpn) }

// DefaultRateDepth is the rate test's most outstanding requests per
// connection when Plan.RateDepth is 0: 1 over HTTP/1.1 (no pipelining
// unless asked); over HTTP/2 128 streams, and never more than the peer's
// SETTINGS_MAX_CONCURRENT_STREAMS, which admission honours whatever the
// depth.
func (p Protocol) DefaultRateDepth() int { return p.def().rateDepth }

// AnswersInOrder reports whether a connection answers its requests in
// the order they were written (HTTP/1.1 pipelining), so that a request
// waits behind the slowest written before it: head-of-line blocking.
func (p Protocol) AnswersInOrder() bool { return p.def().inOrder }

// LevelMadeOf says what a requests-test level of conns connections is
// made of: "64 connections × 3 pipelined requests", "64 connections × 1
// request", "8 connections × 4 + 56 × 3" when the level is not a multiple
// of conns (the engine's words for it), "5 connections × 1, 3 idle" below
// conns; streams over HTTP/2 ("64 connections × 3 streams"). "" when
// conns is unknown (0).
func (p Protocol) LevelMadeOf(level, conns int) string {
	if conns < 1 {
		return ""
	}
	hi, d := level%conns, level/conns
	if hi != 0 && d > 0 {
		return fmt.Sprintf("%s × %d + %d × %d", plural(hi, "connection"), d+1, conns-hi, d)
	}
	if hi != 0 {
		return fmt.Sprintf("%d connections × 1, %d idle", hi, conns-hi)
	}
	return plural(conns, "connection") + " × " + plural(d, p.def().unit(d))
}

// plural is "1 thing" or "N things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// selectsALPN is the protocol a TLS server must select by ALPN (the
// engine's sched.Config.ALPN): "h2" for HTTP/2, "" (any, or none) for
// HTTP/1.1.
func (p Protocol) selectsALPN() string { return p.def().selects }

// hashedHTTP2 is the shard plan hash's HTTP2 field (targetHash): true
// for HTTP/2 only. The hash keeps the bool that Target.HTTP2 was before
// the protocol became a value, so that the hash of a plan, over either
// protocol, stays byte-identical across releases (shards of different
// versions compare it).
func (p Protocol) hashedHTTP2() bool { return p.def().hashedHTTP2 }

// templates returns an empty list of p's request templates.
func (p Protocol) templates() templates { return p.def().templates() }

// templates are a protocol's request templates, each encoded once, and
// the engine's constructors of the sessions that send them.
type templates interface {
	// add encodes t's request to u as the next template; t1 is the
	// request's HTTP/1.1 encoding (encodeRequest), which every protocol
	// makes first: it validates the request and says whether it may be
	// replayed.
	add(t *Target, u *url.URL, t1 *h1.Template) error
	// sessions makes a session per connection owner over every template,
	// in order: the target's one, or a request mix's (mix_run.go).
	sessions() func() sched.Session
}

// templateList is a protocol's templates of type T, and how it encodes
// them and makes its sessions over them.
type templateList[T any] struct {
	list    []*T
	encode  func(t *Target, u *url.URL, t1 *h1.Template) (*T, error)
	session func([]*T) sched.Session
}

func (l *templateList[T]) add(t *Target, u *url.URL, t1 *h1.Template) error {
	tmpl, err := l.encode(t, u, t1)
	if err != nil {
		return err
	}
	l.list = append(l.list, tmpl)
	return nil
}

func (l *templateList[T]) sessions() func() sched.Session {
	list, session := l.list, l.session
	return func() sched.Session { return session(list) }
}

// DefaultRateDepth is Protocol.DefaultRateDepth of HTTP2 (http2) or
// HTTP1.
//
// Deprecated: use Protocol.DefaultRateDepth (Target.Proto().DefaultRateDepth()).
func DefaultRateDepth(http2 bool) int {
	if http2 {
		return HTTP2.DefaultRateDepth()
	}
	return HTTP1.DefaultRateDepth()
}
