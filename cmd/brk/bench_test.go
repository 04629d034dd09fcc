package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/brk-bench/brk/bench"
)

// benchCSV parses brk bench's CSV and checks what every row must hold:
// the header, counts that add up, and the columns that are always there.
func benchCSV(t *testing.T, r result) []map[string]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil {
		t.Fatalf("CSV: %v\n%s", err, r)
	}
	if len(recs) == 0 || !slices.Equal(recs[0], bench.Columns) {
		t.Fatalf("CSV header %v, want %v\n%s", recs[0], bench.Columns, r)
	}
	var rows []map[string]string
	for _, rec := range recs[1:] {
		row := map[string]string{}
		for i, k := range bench.Columns {
			row[k] = rec[i]
		}
		n := func(k string) uint64 {
			v, err := strconv.ParseUint(row[k], 10, 64)
			if err != nil {
				t.Fatalf("column %s = %q: %v\n%s", k, row[k], err, r)
			}
			return v
		}
		sum := n("succeeded")
		for _, k := range []string{"timeout", "transport", "abandoned", "connect", "connect_timeout", "status", "body", "protocol_error"} {
			sum += n(k)
		}
		if n("attempted") != sum || n("attempted") == 0 {
			t.Errorf("attempted %d, succeeded + failures %d\n%v", n("attempted"), sum, rec)
		}
		if want := strconv.FormatBool(n("succeeded") == n("attempted")); row["all_ok"] != want {
			t.Errorf("all_ok %q, want %s\n%v", row["all_ok"], want, rec)
		}
		for _, k := range []string{"client_user_s", "client_system_s", "client_cpu_us_per_attempt", "successes_per_s", "target_coverage_pct", "duration_s"} {
			if _, err := strconv.ParseFloat(row[k], 64); err != nil {
				t.Errorf("column %s = %q, want a number\n%v", k, row[k], rec)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func num(t *testing.T, row map[string]string, k string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(row[k], 64)
	if err != nil {
		t.Fatalf("column %s = %q, want a number\n%v", k, row[k], row)
	}
	return v
}

// checkOrder checks the rows' combinations against the expected order.
func checkOrder(t *testing.T, rows []map[string]string, want []string) {
	t.Helper()
	var got []string
	for _, r := range rows {
		got = append(got, r["repetition"]+"/"+r["protocol"]+"/"+r["connections"]+"/"+r["depth"])
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows (repetition/protocol/connections/depth) %v, want %v", got, want)
	}
}

// TestBenchMatrix: h1 at depths 1 and 8, two repetitions of 1 s phases
// against the built-in child: one row per combination and repetition, the
// second repetition reversed, counts that add up, every response ok, and
// the responder's CPU present.
func TestBenchMatrix(t *testing.T) {
	r := runBrk(t, "bench", "--protocols", "h1", "--connections", "8", "--depths", "1,8",
		"--threads", "1", "--server-threads", "1", "--phase", "1s", "--timeout", "1s", "--repeat", "2", "--quiet")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", r.code, r)
	}
	rows := benchCSV(t, r)
	checkOrder(t, rows, []string{"1/h1/8/1", "1/h1/8/8", "2/h1/8/8", "2/h1/8/1"})
	for _, row := range rows {
		if row["all_ok"] != "true" || row["threads"] != "1" || row["server_threads"] != "1" || row["phase_s"] != "1.000" {
			t.Errorf("row %v: want all_ok, 1 client and 1 server thread, phase 1 s", row)
		}
		if num(t, row, "responder_user_s")+num(t, row, "responder_system_s") <= 0 || num(t, row, "responder_cpu_us_per_response") <= 0 {
			t.Errorf("row %v: no responder CPU", row)
		}
		if !strings.HasPrefix(row["responder"], "brk fixture (net/http") {
			t.Errorf("responder %q, want the built-in fixture", row["responder"])
		}
		num(t, row, "latency_p50_ms")
		num(t, row, "latency_p99_ms")
		num(t, row, "client_cpu_us_per_success")
	}
	// The human table: the header and one line per phase on stderr.
	if !strings.Contains(r.stderr, bench.TableHeader) || strings.Count(r.stderr, "\n  1 h1 ")+strings.Count(r.stderr, "\n  2 h1 ") != 4 {
		t.Errorf("stderr has no table of 4 rows\n%s", r)
	}
}

// TestBenchResponderApart: a fixture-bin written in sh speaks the contract
// for a responder in this test process and reports a synthetic CPU clock
// that gains 1000 s of user time at every sample. Each row's responder
// user time is then exactly 1000 s (sampled once before and once after the
// phase), and none of it appears in the client's columns.
func TestBenchResponderApart(t *testing.T) {
	fx := startFixture(t, bench.FixtureConfig{})
	script := filepath.Join(t.TempDir(), "fake-fixture")
	src := `#!/bin/sh
read cfg
echo '{"addr":"` + fx.Addr() + `","implementation":"fake sh","protocol":"h1","threads":3}'
n=0
while read cmd; do
  case "$cmd" in
  *sample*) n=$((n+1)); echo "{\"user_us\":$((n*1000000000)),\"system_us\":7}" ;;
  *stop*) echo '{"stopped":true}'; exit 0 ;;
  esac
done
`
	if err := os.WriteFile(script, []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runBrk(t, "bench", "--fixture-bin", script, "--connections", "4", "--depths", "1,2",
		"--phase", "300ms", "--timeout", "1s", "--repeat", "1", "--quiet")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", r.code, r)
	}
	rows := benchCSV(t, r)
	checkOrder(t, rows, []string{"1/h1/4/1", "1/h1/4/2"})
	for _, row := range rows {
		if row["responder_user_s"] != "1000.000000" || row["responder_system_s"] != "0.000000" ||
			row["server_threads"] != "3" || row["responder"] != "fake sh" {
			t.Errorf("row %v: want responder user 1000 s, system 0 s, 3 threads, named fake sh", row)
		}
		if c := num(t, row, "client_user_s") + num(t, row, "client_system_s"); c >= 100 {
			t.Errorf("client CPU %v s: the responder's is in it\n%v", c, row)
		}
	}
}

// TestBenchFixtureBin: the downstream example (examples/fixture-nethttp,
// net/http's default server) is built and runs under --fixture-bin with
// the same columns.
func TestBenchFixtureBin(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fixture-nethttp")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/brk-bench/brk/examples/fixture-nethttp").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	r := runBrk(t, "bench", "--fixture-bin", bin, "--connections", "8", "--depths", "1,8",
		"--phase", "1s", "--timeout", "1s", "--repeat", "1", "--server-threads", "2", "--quiet")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", r.code, r)
	}
	rows := benchCSV(t, r)
	checkOrder(t, rows, []string{"1/h1/8/1", "1/h1/8/8"})
	for _, row := range rows {
		if !strings.HasPrefix(row["responder"], "fixture-nethttp") || row["server_threads"] != "2" || row["all_ok"] != "true" {
			t.Errorf("row %v: want the example responder with 2 threads, all ok", row)
		}
		if num(t, row, "responder_user_s")+num(t, row, "responder_system_s") <= 0 {
			t.Errorf("row %v: no responder CPU", row)
		}
	}
}

// TestBenchURL: an external target has empty responder columns (not
// zeros); one that does not answer exactly ok counts body failures and
// says so.
func TestBenchURL(t *testing.T) {
	fx := startFixture(t, bench.FixtureConfig{})
	for _, c := range []struct {
		path string
		ok   bool
	}{{"/plain", true}, {"/hello", false}} {
		r := runBrk(t, "bench", "--url", fx.URL(c.path), "--connections", "2", "--depths", "1",
			"--phase", "300ms", "--timeout", "1s", "--repeat", "1", "--quiet")
		if r.code != 0 {
			t.Fatalf("exit %d, want 0\n%s", r.code, r)
		}
		rows := benchCSV(t, r)
		if len(rows) != 1 {
			t.Fatalf("%d rows, want 1\n%s", len(rows), r)
		}
		row := rows[0]
		for _, k := range []string{"server_threads", "responder_user_s", "responder_system_s", "responder_cpu_us_per_response"} {
			if row[k] != "" {
				t.Errorf("%s: column %s = %q, want empty", c.path, k, row[k])
			}
		}
		if row["responder"] != "external" {
			t.Errorf("responder %q, want external", row["responder"])
		}
		if c.ok != (row["all_ok"] == "true") || !c.ok && (row["succeeded"] != "0" || row["body"] == "0") {
			t.Errorf("%s: row %v: want all_ok %v (body failures otherwise)", c.path, row, c.ok)
		}
	}
}

// TestBenchHTTP2: the matrix's HTTP/2 rows, h2c and h2 over TLS (the
// child's own certificate trusted), against the built-in child.
func TestBenchHTTP2(t *testing.T) {
	r := runBrk(t, "bench", "--protocols", "h1,h2c,h2-tls", "--connections", "8", "--depths", "8",
		"--threads", "1", "--server-threads", "1", "--phase", "1s", "--timeout", "1s", "--repeat", "1", "--quiet")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", r.code, r)
	}
	rows := benchCSV(t, r)
	checkOrder(t, rows, []string{"1/h1/8/8", "1/h2c/8/8", "1/h2-tls/8/8"})
	for _, row := range rows {
		if row["all_ok"] != "true" || num(t, row, "succeeded") == 0 || num(t, row, "responder_cpu_us_per_response") <= 0 {
			t.Errorf("row %v: want every request answered ok and the responder's CPU", row)
		}
	}
}

// TestBenchRefused: what the build lacks and bad matrices are refused with
// exit 2, one line, no CSV.
func TestBenchRefused(t *testing.T) {
	cases := map[string][]string{
		"unknown protocol":    {"--protocols", "h3"},
		"connections 0":       {"--connections", "0"},
		"depth 0":             {"--depths", "1,0"},
		"repeat 0":            {"--repeat", "0"},
		"threads over conns":  {"--connections", "2", "--threads", "4"},
		"url and fixture-bin": {"--url", "http://127.0.0.1:1/", "--fixture-bin", "/bin/true"},
		"bad url":             {"--url", "ftp://x/"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			r := runBrk(t, append([]string{"bench"}, args...)...)
			if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "brk: ") {
				t.Fatalf("want exit 2, one line on stderr, no stdout\n%s", r)
			}
		})
	}
}

// TestBenchHelpReadme: `brk bench --help` and the page that documents it,
// docs/bench.md ("Benchmark the client"), name the same flags, and the
// page documents every CSV column.
func TestBenchHelpReadme(t *testing.T) {
	page := docPageNamed(t, "docs/bench.md")
	sec, ok := strings.CutPrefix(page.text, "# Benchmark the client\n")
	if !ok {
		t.Fatal("docs/bench.md does not start with # Benchmark the client")
	}
	r := runBrk(t, "bench", "--help")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r)
	}
	// The help's flag lines: "  -h, --help …", "      --phase=10s …".
	flag := regexp.MustCompile(`(?m)^\s+(?:-[a-zA-Z], )?(--[a-z][a-z0-9-]*)`)
	help := map[string]bool{}
	for _, m := range flag.FindAllStringSubmatch(r.stdout, -1) {
		help[m[1]] = true
	}
	delete(help, "--help")
	delete(help, "--version") // global: every command lists it
	// The page's flag table: lines "| `--flag …` | … |".
	table := map[string]bool{}
	for _, l := range strings.Split(sec, "\n") {
		if m := regexp.MustCompile("^\\| `(--[a-z][a-z0-9-]*)").FindStringSubmatch(l); m != nil {
			table[m[1]] = true
		}
	}
	for f := range help {
		if !table[f] {
			t.Errorf("brk bench --help has %s; the bench flag table of docs/bench.md does not", f)
		}
	}
	for f := range table {
		if !help[f] {
			t.Errorf("the bench flag table of docs/bench.md has %s; brk bench --help does not", f)
		}
	}
	for _, c := range bench.Columns {
		if !strings.Contains(sec, "| `"+c+"` |") {
			t.Errorf("docs/bench.md does not document column %s", c)
		}
	}
	if t.Failed() {
		fmt.Println(r.stdout)
	}
}

// TestBenchResponderGone: a responder that exits after the first phase
// (it answers its second sample, the end of phase 1, and is gone) stops
// the matrix at the next phase: no traffic is sent for it, no row is
// written for it, "stopped after 1 of 2 phases" names the gone responder,
// exit 3. Before, the second phase ran against it and its row was written
// with empty responder columns ("stopped after 2 of 2 phases").
func TestBenchResponderGone(t *testing.T) {
	fx := startFixture(t, bench.FixtureConfig{})
	script := filepath.Join(t.TempDir(), "dying-fixture")
	src := `#!/bin/sh
read cfg
echo '{"addr":"` + fx.Addr() + `","implementation":"dying sh","protocol":"h1","threads":1}'
n=0
while read cmd; do
  case "$cmd" in
  *sample*) n=$((n+1)); echo "{\"user_us\":$n,\"system_us\":1}"; [ $n -ge ` + "$GONE_AFTER" + ` ] && exit 0 ;;
  *stop*) echo '{"stopped":true}'; exit 0 ;;
  esac
done
`
	if err := os.WriteFile(script, []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	// Samples per phase: a check that the responder is there, at its
	// start and at its end: the third answered is phase 1's last.
	t.Setenv("GONE_AFTER", "3")
	before := fx.Requests()
	r := runBrk(t, "bench", "--fixture-bin", script, "--connections", "2", "--depths", "1,2",
		"--phase", "300ms", "--timeout", "1s", "--repeat", "1", "--threads", "1", "--quiet")
	served := fx.Requests() - before
	if r.code != 3 {
		t.Fatalf("exit %d, want 3\n%s", r.code, r)
	}
	rows := benchCSV(t, r)
	checkOrder(t, rows, []string{"1/h1/2/1"})
	if !strings.Contains(r.stderr, "stopped after 1 of 2 phases: h1, 2 connections, depth 2: the responder is gone: fixture child: sample: the child closed its stdout (exited?)") {
		t.Errorf("stderr does not say the matrix stopped at phase 2 for the gone responder\n%s", r)
	}
	if len(rows) > 0 && float64(served) != num(t, rows[0], "attempted") {
		t.Errorf("the fixture served %d requests, the only row attempted %s: phase 2 sent traffic", served, rows[0]["attempted"])
	}
	// A responder gone during a phase (after the sample at its start)
	// makes that phase no row either.
	t.Setenv("GONE_AFTER", "2")
	r = runBrk(t, "bench", "--fixture-bin", script, "--connections", "2", "--depths", "1,2",
		"--phase", "300ms", "--timeout", "1s", "--repeat", "1", "--threads", "1", "--quiet")
	if r.code != 3 || !strings.Contains(r.stderr, "stopped after 0 of 2 phases: h1, 2 connections, depth 1: the responder is gone") {
		t.Errorf("a responder gone during phase 1: want exit 3, no row\n%s", r)
	}
	if rows := benchCSV(t, r); len(rows) != 0 {
		t.Errorf("%d rows, want none", len(rows))
	}
	// The docs (README.md and docs/*.md) say which protocols the built-in
	// child serves.
	var docs strings.Builder
	for _, p := range docPages(t) {
		docs.WriteString(p.text)
	}
	if strings.Contains(docs.String(), "serving `h1` only") || !strings.Contains(docs.String(), "serving `h1`, `h2c` and `h2-tls`") {
		t.Errorf("the docs say brk fixture --child serves h1 only; it serves the h2c and h2-tls rows too (TestBenchHTTP2)")
	}
}
