package judge

import (
	"crypto/x509"
	"errors"
)

// Names are the names a reason (Judgement.Reason, Outcome.Reason, a
// phase's setup error) gives the settings it suggests changing: "success
// 93.3% (405 of 434) is below Plan.Accept 99.99% at 37 concurrent
// connections", "… give Plan.Max". An empty field names its setting as a
// program that calls package brk sets it: the Go selector of the field
// (Plan.Accept, Target.TLS.CACert); a program that took the values from
// elsewhere names them as its user knows them (the brk command: --accept,
// --cacert FILE). The names are words only: no judgement depends on them.
type Names struct {
	Accept  string // Plan.Accept: the success share a phase must reach
	MaxP99  string // Plan.MaxP99: the p99 latency limit
	MaxP999 string // Plan.MaxP999: the p99.9 latency limit
	Threads string // Plan.Threads: the client's worker threads
	Max     string // Plan.Max: the ramp's ceiling
	Conns   string // Plan.Conns: the connections (the requests test)
	Timeout string // Plan.Timeout: the request budget
	// ExpectStatus: the accepted status codes (Target.ExpectStatus).
	ExpectStatus string
	// CACert and Insecure: the authorities to trust, or no verification
	// of the server's certificate (Target.TLS.CACert, Target.TLS.Insecure).
	CACert, Insecure string
	// Shard: what makes a run one shard of a sharded run, whose report a
	// merge reads (Plan.Shard).
	Shard string
}

// LibraryNames are the names an empty field of Names stands for: the Go
// selectors of package brk's fields.
func LibraryNames() Names {
	return Names{
		Accept: "Plan.Accept", MaxP99: "Plan.MaxP99", MaxP999: "Plan.MaxP999",
		Threads: "Plan.Threads", Max: "Plan.Max", Conns: "Plan.Conns", Timeout: "Plan.Timeout",
		ExpectStatus: "Target.ExpectStatus",
		CACert:       "Target.TLS.CACert", Insecure: "Target.TLS.Insecure",
		Shard: "Plan.Shard",
	}
}

// Filled is n with each empty field set to its LibraryNames name: the
// names the reasons use.
func (n Names) Filled() Names {
	d := LibraryNames()
	for _, f := range []struct {
		got *string
		def string
	}{
		{&n.Accept, d.Accept}, {&n.MaxP99, d.MaxP99}, {&n.MaxP999, d.MaxP999},
		{&n.Threads, d.Threads}, {&n.Max, d.Max}, {&n.Conns, d.Conns}, {&n.Timeout, d.Timeout},
		{&n.ExpectStatus, d.ExpectStatus}, {&n.CACert, d.CACert}, {&n.Insecure, d.Insecure},
		{&n.Shard, d.Shard},
	} {
		if *f.got == "" {
			*f.got = f.def
		}
	}
	return n
}

// SetupErrorText is a failed setup's error as the reason says it; a
// server certificate that did not verify says what to do next, its
// settings named by n.
func SetupErrorText(err error, n Names) string {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &unknown):
		return err.Error() + ": give the server's CA with " + n.CACert + ", or skip verification with " + n.Insecure
	case errors.As(err, &host):
		return err.Error() + ": use a name the certificate holds, or skip verification with " + n.Insecure
	case errors.As(err, &invalid):
		return err.Error() + ": if you trust this server, skip verification with " + n.Insecure
	}
	return err.Error()
}
