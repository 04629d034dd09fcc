package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecretsNeverWritten: no secret brk was given reaches stdout,
// stderr, the JSON or the HTML report (issue 29 item 1), though servers
// echo them: a remote-write receiver answers 401 quoting the credential
// it refused (plain, then JSON-escaped), and the target echoes -H
// Authorization and Cookie in a body that fails --expect-body, so that
// the phase keeps it as a body sample, cut short at 64 bytes. The
// token after the scheme and the echo's first bytes are hidden too.
func TestSecretsNeverWritten(t *testing.T) {
	const (
		promToken = "pr0m/t0ken-abcdefghijklmnop"
		loadToken = "l0ad-t0ken-0123456789abcdefghijklmnopqrstuvwxyz-0123456789"
		cookie    = "c00kie-value-9876"
	)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		got := r.Header.Get("Authorization")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `bad credentials %s; {"token":"%s"}`, got, strings.ReplaceAll(strings.TrimPrefix(got, "Bearer "), "/", `\/`))
	}))
	defer recv.Close()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Of the 64 bytes kept, the token's first 17: cut short.
		fmt.Fprintf(w, "cookie %s denied %s", r.Header.Get("Cookie"), r.Header.Get("Authorization"))
	}))
	defer target.Close()
	t.Setenv(envPromAuthorization, "Bearer "+promToken)
	dir := t.TempDir()
	jsonPath, htmlPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html")
	r := runBrk(t, target.URL+"/", "-d", "300ms", "--conn", "2", "--threads", "1", "--quiet", "-v",
		"-H", "Authorization: Bearer "+loadToken, "-H", "Cookie: session="+cookie, "--expect-body", "ok",
		"--prometheus-remote-write", recv.URL+"/api/v1/write", "--json", jsonPath, "--report", htmlPath)
	if r.code != exitBroken || !strings.Contains(r.stdout, "last error") || !strings.Contains(r.stdout, "first differing body") {
		t.Fatalf("want exit 1 with a body sample and the push's last error\n%s", r)
	}
	jsonOut, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	htmlOut, err := os.ReadFile(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"stdout": r.stdout, "stderr": r.stderr, "JSON": string(jsonOut), "HTML": string(htmlOut)} {
		for _, secret := range []string{"pr0m", "t0ken-abcdefghijklmnop", loadToken[:10], cookie} {
			if strings.Contains(out, secret) {
				t.Errorf("%s carries %q", name, secret)
			}
		}
		if name != "stderr" && !strings.Contains(out, "[redacted]") {
			t.Errorf("%s redacted nothing", name)
		}
	}
	if t.Failed() {
		t.Logf("%s", r)
	}
}

// TestSecretsInRefusals: a refusal that quotes a URL never shows its
// password: the library shows the URL redacted, and stderr hides what a
// parser's error quotes whole.
func TestSecretsInRefusals(t *testing.T) {
	for _, args := range [][]string{
		{"http://user:pa55word@[::1/plain"},
		{"http://user:pa55word@127.0.0.1:1/plain"},
		{"http://127.0.0.1:1/plain", "--prometheus-remote-write", "ftp://user:pa55word@127.0.0.1:1/write"},
		{"http://127.0.0.1:1/plain", "--prometheus-remote-write", "http://user:pa55word@[::1/write"},
	} {
		var out, errb strings.Builder
		code := run(args, &out, &errb)
		if code != exitUsage || strings.Contains(errb.String()+out.String(), "pa55word") {
			t.Errorf("brk %s: exit %d, want 2 without the password\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
		}
	}
}
