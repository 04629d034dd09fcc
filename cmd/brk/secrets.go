package main

import (
	"io"
	"os"
	"reflect"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/redact"
)

// The secrets brk is given never reach what it writes (docs/cli.md,
// "Secrets"): each is redacted by one redact.Secrets, built from the
// environment and the flags, that every writer goes through — stdout
// and stderr (redactWriter), each phase's stats before any observer sees
// them (redactObserver), the run's result before its text, JSON and HTML
// are written, the pushed series' labels.

// envSecrets are the environment variables that hold secrets.
var envSecrets = []string{envPromAuthorization, "BRK_TOKEN"}

// startSecrets is the set of the environment's secrets, before the flags
// are parsed.
func startSecrets() *redact.Secrets {
	s := redact.New()
	for _, name := range envSecrets {
		s.Add(os.Getenv(name))
	}
	return s
}

// addFlagSecrets adds the parsed flags' secrets: the value of every -H
// Authorization, Proxy-Authorization and Cookie header, and the password
// of every URL given as a flag or an argument.
func addFlagSecrets(s *redact.Secrets, kctx *kong.Context) {
	for _, p := range kctx.Path {
		var v *kong.Value
		switch {
		case p.Flag != nil:
			v = p.Flag.Value
		case p.Positional != nil:
			v = p.Positional
		default:
			continue
		}
		if !v.Target.IsValid() {
			continue
		}
		for _, x := range textsOf(v.Target) {
			s.URL(x)
			if v.Name == "header" {
				name, value, _ := strings.Cut(x, ":")
				s.Header(name, value)
			}
		}
	}
}

// textsOf is a flag's texts: its value, or its list's items.
func textsOf(v reflect.Value) []string {
	switch v.Kind() {
	case reflect.String:
		return []string{v.String()}
	case reflect.Slice:
		var out []string
		for i := range v.Len() {
			if e := v.Index(i); e.Kind() == reflect.String {
				out = append(out, e.String())
			}
		}
		return out
	}
	return nil
}

// addTargetSecrets adds a target's secrets: its headers' and its request
// mix's (a targets file's Authorization lines), and its URLs' passwords.
func addTargetSecrets(s *redact.Secrets, t brk.Target) {
	s.URL(t.URL)
	for _, h := range t.Headers {
		s.Header(h.Name, h.Value)
	}
	for _, r := range t.Mix {
		s.URL(r.URL)
		for _, h := range r.Headers {
			s.Header(h.Name, h.Value)
		}
	}
}

// redactWriter writes through w with every secret redacted.
type redactWriter struct {
	w   io.Writer
	sec *redact.Secrets
}

func (r *redactWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, r.sec.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// terminal is w's file when w writes to a terminal (through a
// stickyWriter and a redactWriter or not).
func terminal(w io.Writer) (*os.File, bool) {
	if s, ok := w.(*stickyWriter); ok {
		w = s.w
	}
	if r, ok := w.(*redactWriter); ok {
		w = r.w
	}
	f, ok := w.(*os.File)
	return f, ok && isTerminal(f.Fd())
}

// redactObserver redacts each finished phase's stats (a failed body the
// server echoed a credential in, its errors) before inner, and every
// observer after it, sees them.
type redactObserver struct {
	brk.Observer
	sec *redact.Secrets
}

func (o redactObserver) PhaseFinished(ps *brk.PhaseStats) {
	o.sec.Walk(ps)
	o.Observer.PhaseFinished(ps)
}

// redacting wraps obs in a redactObserver. The live readings pass as
// they are: they carry no text.
func redacting(sec *redact.Secrets, obs brk.Observer) brk.Observer {
	return redactObserver{Observer: obs, sec: sec}
}
