package brk_test

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk"
)

// TestReasonNamesThroughRun: Plan.Names reaches the reasons a run writes,
// the engine's setup errors included: a TLS server whose authority the
// client does not know ends the run with a reason that names the fields
// to set (Target.TLS.CACert, Target.TLS.Insecure) by default, and the
// names given otherwise (the brk command's flags).
func TestReasonNamesThroughRun(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	srv.StartTLS()
	defer srv.Close()
	for _, c := range []struct {
		names brk.Names
		want  string
	}{
		{brk.Names{}, "give the server's CA with Target.TLS.CACert, or skip verification with Target.TLS.Insecure"},
		{brk.Names{CACert: "--cacert FILE", Insecure: "--insecure"}, "give the server's CA with --cacert FILE, or skip verification with --insecure"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := brk.Run(ctx, brk.Target{URL: srv.URL + "/"}, brk.Plan{Conns: 1, Start: 1, Pace: 1, Max: 1,
			Phase: 100 * time.Millisecond, Timeout: time.Second, Threads: 1, Repeat: 1, Names: c.names}, nil)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != brk.VerdictInconclusive || !strings.Contains(res.Reason, c.want) ||
			c.names == (brk.Names{}) && strings.Contains(res.Reason, "--") {
			t.Errorf("names %+v: %s %q, want a reason holding %q", c.names, res.Verdict, res.Reason, c.want)
		}
	}
}
