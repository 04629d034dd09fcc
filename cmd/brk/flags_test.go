package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Flags a user of wrk, hey or oha reaches for first: -c, -t, --version,
// a header value holding commas, and a warning for --accept below 1.
func TestFamiliarFlags(t *testing.T) {
	var mu sync.Mutex
	var accept []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		accept = append(accept, r.Header.Get("Accept"))
		mu.Unlock()
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	r := runBrk(t, srv.URL+"/", "-c", "2", "-t", "1", "--max", "1", "--phase", "200ms",
		"-H", "Accept: text/html, application/json", "--accept", "0.999")
	expect(t, r, 0, "Done (2 concurrent requests)")
	if !strings.Contains(forcedBackendAside(t, r.stdout), "2 connections") || !strings.Contains(forcedBackendAside(t, r.stdout), "1 worker thread\n") {
		t.Errorf("-c 2 -t 1 not applied:\n%s", r.stdout)
	}
	mu.Lock()
	got := accept
	mu.Unlock()
	if len(got) == 0 || got[0] != "text/html, application/json" {
		t.Errorf("the server saw Accept %q", got)
	}
	if !strings.Contains(r.stderr, "warning: --accept 0.999 means 0.999 %") {
		t.Errorf("no warning for --accept 0.999:\n%s", r.stderr)
	}
	v := runBrk(t, "--version")
	if v.code != 0 || !strings.HasPrefix(v.stdout, "brk ") {
		t.Errorf("--version: %s", v)
	}
}
