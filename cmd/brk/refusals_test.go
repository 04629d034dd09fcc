package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brk-bench/brk/internal/testenv"
)

// refusals are command lines the library (or the CLI) refuses before any
// traffic, with the exact line each prints after "brk: ". The library
// words its refusals with its Go field names (brk.PlanError); the CLI
// rewords them with its flags (flagWords), so these lines are the ones
// brk printed before the library spoke its own words.
var refusals = []struct {
	name  string
	token bool // run with BRK_TOKEN set
	args  []string
	want  string
}{
	{"start over max", false, []string{"http://127.0.0.1:1/plain", "--start", "5", "--max", "3"}, "--start (5) is above --max (3)"},
	{"threads negative", false, []string{"http://127.0.0.1:1/plain", "--threads=-1"}, "--threads must not be negative"},
	{"threads over conn", false, []string{"http://127.0.0.1:1/plain", "--conn", "2", "--threads", "4"}, "--threads (4) is more than --conn (2): a thread needs a connection"},
	{"max negative", false, []string{"http://127.0.0.1:1/plain", "--max=-1"}, "--max must not be negative"},
	{"max over level", false, []string{"http://127.0.0.1:1/plain", "--conn", "1", "--max", "100000000"}, "--start/--max above 65536 are not supported: they count requests per connection (100000000 on each of 1 connection is 100000000 outstanding)"},
	{"conn over level", false, []string{"http://127.0.0.1:1/plain", "--conn", "100000000"}, "--conn above 65536 is not supported"},
	{"outstanding", false, []string{"http://127.0.0.1:1/plain", "--conn", "65536", "--max", "100"}, "--conn × --start/--max above 4194304 outstanding requests is not supported"},
	{"max-p99 negative", false, []string{"http://127.0.0.1:1/plain", "--max-p99=-1s"}, "--max-p99 and --max-p999 must not be negative"},
	{"max-p999 negative", false, []string{"http://127.0.0.1:1/plain", "--max-p999=-1s"}, "--max-p99 and --max-p999 must not be negative"},
	{"growth with pace", false, []string{"http://127.0.0.1:1/plain", "--pace", "2", "--growth", "3"}, "--growth and --resolution apply to the search: leave out --pace (a linear ramp), or give --refine to bisect its break"},
	{"growth 1", false, []string{"http://127.0.0.1:1/plain", "--growth", "1"}, "--growth 1: want a factor above 1 (at most 1000), such as 2"},
	{"growth 0", false, []string{"http://127.0.0.1:1/plain", "--growth", "0"}, "--growth must be above 1"},
	{"resolution 0", false, []string{"http://127.0.0.1:1/plain", "--resolution", "0"}, `--resolution "0": want a level of at least 1 (such as 10) or a percentage (such as 1%)`},
	{"resolution pct", false, []string{"rate", "http://127.0.0.1:1/plain", "--resolution", "150%"}, `--resolution "150%": want a percentage above 0 and at most 100, such as 1%`},
	{"budget below a phase", false, []string{"http://127.0.0.1:1/plain", "--budget", "5s"}, "--budget (5s) is shorter than one phase (--phase 10s + --timeout 1s of drain)"},
	{"budget 0", false, []string{"conn", "http://127.0.0.1:1/plain", "--budget", "0s"}, "--budget must be positive"},
	{"server-pid 0", false, []string{"http://127.0.0.1:1/plain", "--server-pid", "0"}, "--server-pid 0: not a process ID"},
	{"server-pid gone", false, []string{"http://127.0.0.1:1/plain", "--server-pid", "2147483646"}, "--server-pid 2147483646: no such process (or /proc/2147483646/stat is unreadable)"},
	{"accept abc", false, []string{"http://127.0.0.1:1/plain", "--accept", "abc"}, "--accept \"abc\": want a percentage such as 99.99"},
	{"accept 101", false, []string{"http://127.0.0.1:1/plain", "--accept", "101"}, "--accept \"101\": must be at most 100"},
	{"sla 101", false, []string{"http://127.0.0.1:1/plain", "--sla", "101"}, "--accept \"101\": must be at most 100"},
	{"accept negative", false, []string{"http://127.0.0.1:1/plain", "--accept=-1"}, "--accept \"-1\": want a percentage such as 99.99"},
	{"accept exponent", false, []string{"http://127.0.0.1:1/plain", "--accept", "1e2"}, "--accept \"1e2\": want a percentage such as 99.99"},
	{"accept 10 decimals", false, []string{"http://127.0.0.1:1/plain", "--accept", "99.9999999999"}, "--accept \"99.9999999999\": want a percentage such as 99.99"},
	{"accept percent sign 101", false, []string{"http://127.0.0.1:1/plain", "--accept", "101%"}, "--accept \"101%\": must be at most 100"},
	{"conn no-resume on https ok", false, []string{"conn", "https://127.0.0.1:1/", "--no-resume", "--tls-version", "1.1"}, "--tls-version \"1.1\": want 1.2 or 1.3"},
	{"echo without body", false, []string{"http://127.0.0.1:1/plain", "--expect-echo"}, "--expect-echo needs --body-file"},
	{"echo and expect-body", false, []string{"http://127.0.0.1:1/plain", "--expect-echo", "--body-file", "body.txt", "--expect-body", "x"}, "--expect-echo and --expect-body cannot be combined"},
	{"head with expect-body", false, []string{"http://127.0.0.1:1/plain", "--method", "HEAD", "--expect-body", "x"}, "--expect-body and --expect-echo cannot apply to HEAD responses, which have no body"},
	{"bad method", false, []string{"http://127.0.0.1:1/plain", "--method", "G@T"}, "invalid method \"G@T\": not a token"},
	{"bad header name", false, []string{"http://127.0.0.1:1/plain", "-H", "Bad@Name:x"}, "invalid header name \"Bad@Name\": not a token"},
	{"host header", false, []string{"http://127.0.0.1:1/plain", "-H", "Connection:x"}, "header \"Connection\" is set by brk and cannot be given"},
	{"url no scheme", false, []string{"127.0.0.1:1/plain"}, "bad URL \"127.0.0.1:1/plain\": no scheme: give http://127.0.0.1:1/plain or https://127.0.0.1:1/plain"},
	{"url bad scheme", false, []string{"ftp://127.0.0.1:1/plain"}, "bad URL \"ftp://127.0.0.1:1/plain\": the scheme must be http:// or https://"},
	{"url no host", false, []string{"http:///plain"}, "bad URL \"http:///plain\": no host"},
	{"url credentials", false, []string{"http://u:p@127.0.0.1:1/plain"}, "bad URL \"http://u:xxxxx@127.0.0.1:1/plain\": credentials in URLs are not supported (use -H Authorization:)"},
	{"url port 0", false, []string{"http://127.0.0.1:0/plain"}, "bad URL \"http://127.0.0.1:0/plain\": port \"0\" is not 1..65535"},
	{"url unparsable", false, []string{"http://[::1/plain"}, "bad URL \"http://[::1/plain\": parse \"http://[::1/plain\": missing ']' in host"},
	{"connect no port", false, []string{"http://127.0.0.1:1/plain", "--connect", "127.0.0.1"}, "--connect \"127.0.0.1\": want HOST:PORT"},
	{"connect port 0", false, []string{"http://127.0.0.1:1/plain", "--connect", "127.0.0.1:0"}, "--connect \"127.0.0.1:0\": port \"0\" is not 1..65535"},
	{"tls flag on http", false, []string{"http://127.0.0.1:1/plain", "--tls-version", "1.3"}, "TLS options need an https:// URL"},
	{"cacert and insecure", false, []string{"https://127.0.0.1:1/", "--cacert", "x", "--insecure"}, "--cacert and --insecure cannot be combined"},
	{"tls version 1.1", false, []string{"https://127.0.0.1:1/", "--tls-version", "1.1"}, "--tls-version \"1.1\": want 1.2 or 1.3"},
	{"tls group unknown", false, []string{"https://127.0.0.1:1/", "--tls-group", "brainpool"}, "--tls-group \"brainpool\": want X25519, secp256r1, secp384r1, secp521r1, X25519MLKEM768, SecP256r1MLKEM768 or SecP384r1MLKEM1024"},
	{"mlkem with tls 1.2", false, []string{"https://127.0.0.1:1/", "--tls-version", "1.2", "--tls-group", "X25519MLKEM768"}, "--tls-group X25519MLKEM768 needs TLS 1.3; it cannot be offered with --tls-version 1.2"},
	{"tls cipher unknown", false, []string{"https://127.0.0.1:1/", "--tls-cipher", "TLS_BOGUS"}, "--tls-cipher \"TLS_BOGUS\": not a cipher suite crypto/tls knows (IANA names, e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)"},
	{"tls 1.3 suite alone", false, []string{"https://127.0.0.1:1/", "--tls-cipher", "TLS_AES_128_GCM_SHA256"}, "--tls-cipher TLS_AES_128_GCM_SHA256: crypto/tls does not let a client offer one TLS 1.3 suite alone, so it cannot be offered; name a TLS 1.2 suite"},
	{"tls 1.2 suite with 1.3", false, []string{"https://127.0.0.1:1/", "--tls-version", "1.3", "--tls-cipher", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}, "--tls-cipher TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 is a TLS 1.2 suite; it cannot be offered with TLS 1.3 only"},
	{"cert without key", false, []string{"https://127.0.0.1:1/", "--cert", "x.pem"}, "--cert and --key go together"},
	{"key without cert", false, []string{"https://127.0.0.1:1/", "--key", "x.pem"}, "--cert and --key go together"},
	{"cert unreadable", false, []string{"https://127.0.0.1:1/", "--cert", "no-such-cert.pem", "--key", "no-such-key.pem"}, "--cert/--key: open no-such-cert.pem: no such file or directory"},
	{"cacert missing", false, []string{"https://127.0.0.1:1/", "--cacert", "no-such-ca.pem"}, "--cacert: open no-such-ca.pem: no such file or directory"},
	{"cacert not pem", false, []string{"https://127.0.0.1:1/", "--cacert", "notpem.txt"}, "--cacert notpem.txt: no PEM certificate in it"},
	{"conn start over max", false, []string{"conn", "http://127.0.0.1:1/plain", "--start", "5", "--max", "3"}, "--start (5) is above --max (3)"},
	{"conn no-resume on http", false, []string{"conn", "http://127.0.0.1:1/plain", "--no-resume"}, "TLS options need an https:// URL"},
	{"duration with pace", false, []string{"http://127.0.0.1:1/plain", "-d", "30s", "--pace", "1"}, "--duration and --pace cannot be combined: --duration runs one phase of that length at one level (--start), no ramp; --pace ramps the level"},
	{"duration with phase", false, []string{"http://127.0.0.1:1/plain", "--duration", "30s", "--phase", "5s"}, "--duration and --phase cannot be combined: --duration runs one phase of that length at one level (--start), no ramp; --phase is each phase's length of a ramp or search"},
	{"duration with max", false, []string{"rate", "http://127.0.0.1:1/plain", "-d", "30s", "--max", "5"}, "--duration and --max cannot be combined: --duration runs one phase of that length at one level (--start), no ramp; --max is the ceiling of a ramp or search (give the level as --start)"},
	{"duration with growth", false, []string{"conn", "http://127.0.0.1:1/plain", "-d", "30s", "--growth", "3"}, "--duration and --growth cannot be combined: --duration runs one phase of that length at one level (--start), no ramp; --growth applies to the search"},
	{"duration negative", false, []string{"http://127.0.0.1:1/plain", "--duration=-1s"}, "--duration must be at least 1ms"},
	{"keep-alive with requests", false, []string{"conn", "http://127.0.0.1:1/plain", "--keep-alive", "--requests", "3"}, "--keep-alive and --requests cannot be combined: --keep-alive carries requests on each connection until the phase ends; --requests N closes it after N"},
	{"conn requests 0", false, []string{"conn", "http://127.0.0.1:1/plain", "--requests", "0"}, "--requests must be at least 1"},
	{"rate threads over conn", false, []string{"rate", "http://127.0.0.1:1/plain", "--conn", "2", "--threads", "4"}, "--threads (4) is more than --conn (2): a thread needs a connection"},
	{"rate start over max", false, []string{"rate", "http://127.0.0.1:1/plain", "--start", "500", "--max", "100"}, "--start (500) is above --max (100)"},
	{"rate max over limit", false, []string{"rate", "http://127.0.0.1:1/plain", "--max", "1000000000"}, "--start/--max above 10000000 requests/s are not supported"},
	{"rate outstanding", false, []string{"rate", "http://127.0.0.1:1/plain", "--conn", "1000", "--rate-depth", "100000"}, "--conn × --rate-depth above 4194304 outstanding requests is not supported"},
	{"rate seed uniform", false, []string{"rate", "http://127.0.0.1:1/plain", "--seed", "3"}, "--seed applies to --arrivals poisson"},
	{"rate-depth on req", false, []string{"http://127.0.0.1:1/plain", "--rate-depth", "2"}, "--rate-depth applies to the rate test only"},
	{"rate accept abc", false, []string{"rate", "http://127.0.0.1:1/plain", "--accept", "abc"}, "--accept \"abc\": want a percentage such as 99.99"},
	{"rate no-resume", false, []string{"rate", "https://127.0.0.1:1/plain", "--no-resume"}, "--no-resume applies to the connections test only"},
	// Typed zeros that would run as if left out (issue 21 item 14).
	{"max-p99 0s", false, []string{"http://127.0.0.1:1/plain", "--max-p99", "0s"}, "--max-p99 0s: must be more than 0 (leave it out for no p99 rule)"},
	{"max-p999 0s", false, []string{"http://127.0.0.1:1/plain", "--max-p999", "0s"}, "--max-p999 0s: must be more than 0 (leave it out for no p99.9 rule)"},
	{"max-p99 0ms conn", false, []string{"conn", "http://127.0.0.1:1/plain", "--max-p99=0ms"}, "--max-p99 0s: must be more than 0 (leave it out for no p99 rule)"},
	{"rate-depth 0", false, []string{"rate", "http://127.0.0.1:1/plain", "--rate-depth", "0"}, "--rate-depth 0: must be at least 1 (leave it out for 1 over HTTP/1.1, 128 streams with --http2)"},
	{"seed 0", false, []string{"rate", "http://127.0.0.1:1/plain", "--arrivals", "poisson", "--seed", "0"}, "--seed 0: must be at least 1 (leave it out for a random seed, reported in the JSON)"},
	{"drain-allowance 0s", true, []string{"http://127.0.0.1:1/plain", "--shard", "0/2", "--coordinator", "127.0.0.1:1", "--drain-allowance", "0s"}, "--drain-allowance 0s: must be more than 0 (leave it out for --timeout + 1s)"},
	{"join-timeout 0s", true, []string{"http://127.0.0.1:1/plain", "--shard", "0/2", "--coordinator", "127.0.0.1:1", "--join-timeout", "0s"}, "--join-timeout 0s: must be more than 0 (leave it out for 2m)"},
	{"start-tolerance 0s", false, []string{"conn", "http://127.0.0.1:1/plain", "--start-tolerance=0s"}, "--start-tolerance 0s: must be more than 0 (leave it out for 1s)"},
	{"shards 0", false, []string{"http://127.0.0.1:1/plain", "--shards", "0"}, "--shards 0: must be at least 1 (leave it out for a run on one box)"},
	{"seed above 2^53-1", false, []string{"rate", "http://127.0.0.1:1/plain", "--arrivals", "poisson", "--seed", "9007199254740992"}, "--seed 9007199254740992 is above 9007199254740991 (2^53−1): the JSON report could not carry it exactly (jq and JavaScript read its numbers as doubles)"},
	{"demo phase 0s", false, []string{"demo", "--phase", "0s"}, "--phase 0s: must be more than 0 (leave it out for 3s)"},
	{"demo threads 0", false, []string{"demo", "--threads", "0"}, "--threads 0: must be at least 1 (leave it out for 1)"},
	{"ab requests 0", false, []string{"ab", "http://127.0.0.1:1/a", "http://127.0.0.1:1/b", "--connections", "--requests", "0"}, "--requests must be at least 1"},
	{"ab requests without connections", false, []string{"ab", "http://127.0.0.1:1/a", "http://127.0.0.1:1/b", "--requests", "3"}, "--requests needs --connections (brk ab runs the requests test without it)"},
	{"ab requests 1 without connections", false, []string{"ab", "http://127.0.0.1:1/a", "http://127.0.0.1:1/b", "--requests=1"}, "--requests needs --connections (brk ab runs the requests test without it)"},
	{"join-timeout without shard", false, []string{"http://127.0.0.1:1/plain", "--join-timeout", "5s"}, "--join-timeout needs --shard I/N or --shards N"},
	{"start-tolerance without shard", false, []string{"conn", "http://127.0.0.1:1/plain", "--start-tolerance", "2s"}, "--start-tolerance needs --shard I/N or --shards N"},
	// A flag of another test (issue 21 item 15); TestOtherTestsFlags
	// covers every one.
	{"rate-depth 0 on req", false, []string{"http://127.0.0.1:1/plain", "--rate-depth=0"}, "--rate-depth applies to the rate test only"},
	{"seed on conn", false, []string{"conn", "http://127.0.0.1:1/plain", "--seed", "7"}, "--seed applies to the rate test only"},
	{"arrivals on ab", false, []string{"ab", "http://127.0.0.1:1/a", "http://127.0.0.1:1/b", "--arrivals", "poisson"}, "--arrivals applies to the rate test only"},
	{"requests on req", false, []string{"http://127.0.0.1:1/plain", "--requests", "2"}, "--requests applies to the connections test and brk ab only"},
	{"no-resume on req", false, []string{"https://127.0.0.1:1/plain", "--no-resume"}, "--no-resume applies to the connections test only"},
	{"connections on conn", false, []string{"conn", "http://127.0.0.1:1/plain", "--connections"}, "--connections applies to brk ab only"},
	{"shard on ab", false, []string{"ab", "http://127.0.0.1:1/a", "http://127.0.0.1:1/b", "--shard", "0/2"}, "--shard applies to the requests, connections and rate tests only"},
	{"join-timeout on ab", false, []string{"ab", "http://127.0.0.1:1/a", "http://127.0.0.1:1/b", "--join-timeout", "1s"}, "--join-timeout applies to the requests, connections and rate tests only"},
	{"shard without coordinator", false, []string{"http://127.0.0.1:1/plain", "--shard", "0/2"}, "--shard needs --coordinator HOST:PORT (shard 0 listens there), or --start-at T to run in step without a coordinator"},
	{"shard without token", false, []string{"http://127.0.0.1:1/plain", "--shard", "0/2", "--coordinator", "127.0.0.1:1"}, "--coordinator needs the shared token in the environment variable BRK_TOKEN"},
	{"shard baseline", true, []string{"http://127.0.0.1:1/plain", "--shard", "0/2", "--coordinator", "127.0.0.1:1", "--baseline"}, "--baseline is not supported with --shard"},
	{"shard conn split", true, []string{"http://127.0.0.1:1/plain", "--shard", "0/2", "--coordinator", "127.0.0.1:1", "--conn", "1"}, "--conn 1 cannot be split over 2 shards: every shard needs a connection"},
	{"shard join negative", true, []string{"http://127.0.0.1:1/plain", "--shard", "0/2", "--coordinator", "127.0.0.1:1", "--join-timeout=-1s"}, "--start-tolerance, --drain-allowance and --join-timeout must not be negative"},
	{"shard drain negative", true, []string{"http://127.0.0.1:1/plain", "--shard", "0/2", "--coordinator", "127.0.0.1:1", "--drain-allowance=-1s"}, "--start-tolerance, --drain-allowance and --join-timeout must not be negative"},
	{"shard bad spec", false, []string{"http://127.0.0.1:1/plain", "--shard", "5/2"}, "--shard \"5/2\": shard index 5 is not in 0..1"},
	{"ab start over max", false, []string{"ab", "http://127.0.0.1:1/a", "http://127.0.0.1:1/b", "--start", "5", "--max", "3"}, "--start (5) is above --max (3)"},
	{"ab accept abc", false, []string{"ab", "http://127.0.0.1:1/a", "http://127.0.0.1:1/b", "--accept", "abc"}, "--accept \"abc\": want a percentage such as 99.99"},
	{"ab bad url b", false, []string{"ab", "http://127.0.0.1:1/a", "ftp://127.0.0.1:1/b"}, "bad URL \"ftp://127.0.0.1:1/b\": the scheme must be http:// or https://"},
	{"rate phase", false, []string{"rate", "http://127.0.0.1:1/plain", "--phase", "500us"}, "--phase must be at least 1ms"},
	{"accept empty", false, []string{"http://127.0.0.1:1/plain", "--accept="}, `--accept needs a value, not "" (leave the flag out for its default)`},
	{"accept blank", false, []string{"http://127.0.0.1:1/plain", "--accept= "}, "--accept needs a percentage such as 99.99"},
	{"rate outstanding level", false, []string{"rate", "http://127.0.0.1:1/plain", "--conn", "1", "--rate-depth", "100000"}, "--conn × --rate-depth above 4194304 outstanding requests is not supported"},
	{"conn outstanding", false, []string{"conn", "http://127.0.0.1:1/plain", "--max", "100000"}, "--start/--max above 65536 are not supported"},
}

// TestRefusalWording: every refusal exits 2 with its exact flag wording
// and nothing of the library's own (no "Plan." or "Target.").
func TestRefusalWording(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	dir := t.TempDir()
	for name, body := range map[string]string{"body.txt": "hello", "notpem.txt": "not pem\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(brkBin, c.args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "BRK_TOKEN=")
			if c.token {
				cmd.Env = append(cmd.Env, "BRK_TOKEN=s3cret")
			}
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != 2 {
				t.Fatalf("brk %s: exit %d (%v), want 2\nstdout:\n%s\nstderr:\n%s", strings.Join(c.args, " "), code, err, stdout.String(), stderr.String())
			}
			if got, want := stderr.String(), "brk: "+c.want+"\n"; got != want {
				t.Errorf("brk %s:\n got %q\nwant %q", strings.Join(c.args, " "), got, want)
			}
		})
	}
}
