package judge

import (
	"crypto/tls"
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/metrics"
)

// cliNames are the brk command's names of the settings (cmd/brk's
// reasonNames): with them the reasons read as the command has always
// written them.
var cliNames = Names{
	Accept: "--accept", MaxP99: "--max-p99", MaxP999: "--max-p999", Threads: "--threads",
	Max: "--max", Conns: "--conn", Timeout: "--timeout", ExpectStatus: "--expect-status",
	CACert: "--cacert FILE", Insecure: "--insecure", Shard: "--shard and --json",
}

// TestReasonNames: every reason that suggests a setting names it with
// Plan.Names: the library's Go fields by default (and never a command
// line's flag), the names given otherwise, with nothing else of the
// reason changed.
func TestReasonNames(t *testing.T) {
	judge := func(m *Measurement, p Plan, index, level int) func(Names) string {
		return func(n Names) string {
			p.Names = n
			return Judge(m, p, index, level).Reason
		}
	}
	latency := func(p99, p999 time.Duration) func(Names) string {
		m := slowTail()
		p := reqPlan
		p.MaxP99, p.MaxP999 = p99, p999
		return judge(m, p, 1, levelOf(p, 2))
	}
	behind := func() *Measurement {
		m := measured(1000, 0, 0, metrics.Setups{Attempted: 16, Established: 16}, 0)
		s := m.Stats
		s.Scheduled, s.Written = 1000, 1000
		s.LateNs = s.Scheduled * uint64(20*time.Millisecond)
		return m
	}
	ratePlan := Plan{Mode: Rate, Conns: 16, Levels: Levels{Start: 1000, Climb: Linear{Pace: 1000}}, Phase: time.Second, Accept: p9999, RateDepth: 1}
	cert := &x509.Certificate{DNSNames: []string{"localhost"}}
	setup := func(err error) func(Names) string {
		return func(n Names) string { return SetupErrorText(err, n.Filled()) }
	}
	for _, c := range []struct {
		name        string
		reason      func(Names) string
		library     string // a part of the default reason
		cli         string // the same part with cliNames
		settingOnly bool   // the name is all that differs
	}{
		{"success below accept", judge(measured(9998, 2, 0, okSetups, 4), reqPlan, 1, levelOf(reqPlan, 2)),
			"is below Plan.Accept 99.99% at 8 concurrent requests", "success 99.98% (9998 of 10000) is below --accept 99.99% at 8 concurrent requests", true},
		{"setups below accept", judge(measured(4, 0, 0, metrics.Setups{Attempted: 5, Established: 4, Failed: 1}, 4), connsPlan, 1, 4),
			"is below Plan.Accept 99.99%", "setups: 80% established (4 of 5; 1 failed, 0 timed out) is below --accept 99.99% at 4 concurrent connections", true},
		{"p99 above its limit", latency(150*time.Millisecond, 0), "p99 183 ms above Plan.MaxP99 150ms", "p99 183 ms above --max-p99 150ms", true},
		{"p99.9 above its limit", latency(0, 100*time.Millisecond), "p99.9 183 ms above Plan.MaxP999 100ms", "p99.9 183 ms above --max-p999 100ms", true},
		{"client saturated", judge(saturated(measured(9990, 10, 0, okSetups, 4)), reqPlan, 1, levelOf(reqPlan, 2)),
			"give more Plan.Threads or a bigger load box", "the client was saturated: workers 96 % busy — give more --threads or a bigger load box", true},
		{"client behind its schedule", judge(behind(), ratePlan, 0, 1000), "; give it more CPU or Plan.Threads", "% short); give it more CPU or --threads", true},
		{"client behind its schedule, its process starved", judge(func() *Measurement {
			m := behind()
			m.ProcessWait, m.ProcessWaitOK = 40*time.Millisecond, true
			return m
		}(), ratePlan, 0, 1000),
			"% short); this process's goroutines waited up to 40 ms (p99) for a CPU — other work in brk's process competes with its workers: run brk in a process of its own",
			"% short); this process's goroutines waited up to 40 ms (p99) for a CPU — other work in brk's process competes with its workers: run brk in a process of its own", false},
		{"every response a refusal", judge(answering(map[int]uint64{404: 50}, 0, 0, 4), reqPlan, 0, 4),
			"accept the status with Target.ExpectStatus", "every response was 404 Not Found — check the URL, or accept the status with --expect-status", true},
		{"not a byte heard", judge(answering(nil, 0, 50, 0), reqPlan, 0, 4),
			"or raise Plan.Timeout for a server that slow", "not a byte came back from the server on any connection — check the URL and the port, or raise --timeout for a server that slow", true},
		{"the next level beyond the bound", func(n Names) string {
			p := Plan{Mode: Rate, Conns: 4, Levels: Levels{Start: MaxRate + 1, Climb: Linear{Pace: 1}}, Accept: p9999, Names: n}
			return Decide(p, nil, 0).Reason
		}, "; give Plan.Max", "the next level (10000001 requests/s) is beyond what brk supports (10000000 requests/s); give --max", true},
		{"the stream limit's cap", func(n Names) string {
			p := searchPlan
			p.Names = n
			s := newLevelState(p)
			s.judged = []*Judged{floored(8, 100)}
			_, reason := s.maxLevel(Bracket{Held: 800, Broke: -1, HeldPhase: 0, BrokePhase: -1})
			return reason
		}, "; more Plan.Conns goes further", "(SETTINGS_MAX_CONCURRENT_STREAMS 100 × 8 connections); more --conn goes further", true},
		{"an unknown authority", setup(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{Cert: cert}}),
			"give the server's CA with Target.TLS.CACert, or skip verification with Target.TLS.Insecure",
			"x509: certificate signed by unknown authority: give the server's CA with --cacert FILE, or skip verification with --insecure", false},
		{"a name the certificate lacks", setup(&tls.CertificateVerificationError{Err: x509.HostnameError{Certificate: cert, Host: "127.0.0.1"}}),
			"use a name the certificate holds, or skip verification with Target.TLS.Insecure",
			"doesn't contain any IP SANs: use a name the certificate holds, or skip verification with --insecure", true},
		{"an expired certificate", setup(&tls.CertificateVerificationError{Err: x509.CertificateInvalidError{Cert: cert, Reason: x509.Expired}}),
			"if you trust this server, skip verification with Target.TLS.Insecure",
			"expired or is not yet valid: : if you trust this server, skip verification with --insecure", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			lib, cli := c.reason(Names{}), c.reason(cliNames)
			if strings.Contains(lib, "--") || !strings.Contains(lib, c.library) {
				t.Errorf("library reason %q: want %q in it and no flag", lib, c.library)
			}
			if !strings.Contains(cli, c.cli) {
				t.Errorf("CLI reason %q: want %q in it", cli, c.cli)
			}
			if got := c.reason(LibraryNames()); got != lib {
				t.Errorf("LibraryNames reason %q, the zero Names' %q", got, lib)
			}
			if c.settingOnly { // the names are all that changed
				back := cli
				for _, r := range [][2]string{{"--max-p999", "Plan.MaxP999"}, {"--max-p99", "Plan.MaxP99"}, {"--accept", "Plan.Accept"},
					{"--threads", "Plan.Threads"}, {"--max", "Plan.Max"}, {"--conn", "Plan.Conns"}, {"--timeout", "Plan.Timeout"},
					{"--expect-status", "Target.ExpectStatus"}, {"--insecure", "Target.TLS.Insecure"}} {
					back = strings.ReplaceAll(back, r[0], r[1])
				}
				if back != lib {
					t.Errorf("CLI reason %q, renamed back %q, differs from the library's %q", cli, back, lib)
				}
			}
		})
	}
}

// TestNamesFilled: an empty name is the library's, a given one is kept.
func TestNamesFilled(t *testing.T) {
	if got := (Names{}).Filled(); got != LibraryNames() {
		t.Fatalf("zero Names filled %+v, want %+v", got, LibraryNames())
	}
	if got := cliNames.Filled(); got != cliNames {
		t.Fatalf("full Names filled %+v, want them kept", got)
	}
	if got := (Names{Accept: "accept_pct"}).Filled(); got.Accept != "accept_pct" || got.MaxP99 != "Plan.MaxP99" {
		t.Fatalf("partial Names filled %+v", got)
	}
}
