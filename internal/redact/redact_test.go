package redact

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	s := New("Bearer s3cr<et>/tok\"en", "  tok123  ")
	s.Header("Cookie", "session=c00kieval; theme=dark")
	s.Header("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("alice:pa55word")))
	s.Header("X-Other", "notsecret")
	s.URL("http://bob:hunter22@127.0.0.1:9/write")
	s.URL("http://eve:unparsable@[::1/write") // its parser's error quotes it
	for _, c := range []struct{ in, want string }{
		{`401 bad credentials Bearer s3cr<et>/tok"en`, "401 bad credentials " + Mark},
		{`token s3cr<et>/tok"en refused`, "token " + Mark + " refused"},                            // the token after the scheme
		{`{"error":"bad token s3cr\u003cet\u003e/tok\"en"}`, `{"error":"bad token ` + Mark + `"}`}, // JSON-escaped, Go's HTML-safe
		{`{"error":"bad token s3cr<et>\/tok\"en"}`, `{"error":"bad token ` + Mark + `"}`},          // JSON-escaped, PHP's
		{`s3cr&lt;et&gt;/tok&#34;en`, Mark},                                                        // HTML-escaped
		{"tok123", Mark},
		{"cookie c00kieval theme=dark", "cookie " + Mark + " " + Mark},
		{"user alice:pa55word denied", "user " + Mark + " denied"},
		{"bob:hunter22", Mark},
		{`parse "http://eve:unparsable@[::1/write": missing ']' in host`, `parse "http://` + Mark + `@[::1/write": missing ']' in host`},
		{"notsecret", "notsecret"},
		// Cut short at the end of a body: the token's prefix goes.
		{"bad credentials Bearer s3cr<e", "bad credentials Bearer " + Mark},
		{"ends in tok1", "ends in " + Mark},
		{"ends in tok", "ends in tok"}, // under MinLen bytes of it
		{"the scheme alone: Bearer", "the scheme alone: Bearer"},
	} {
		if got := s.Echo(c.in); got != c.want {
			t.Errorf("Echo(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// String leaves a text's end alone: it ends a write, not an echo.
	if got := s.String("ends in tok1"); got != "ends in tok1" {
		t.Errorf("String cut a trailing prefix: %q", got)
	}
	var none *Secrets
	if none.String("x") != "x" || (&Secrets{}).String("x") != "x" || none.Echo("x") != "x" {
		t.Error("an empty set changes its input")
	}
	if got := New("abc").String("abc abc"); got != "abc abc" {
		t.Errorf("a secret under MinLen bytes is searched for: %q", got)
	}
}

func TestBody(t *testing.T) {
	s := New("Bearer abcdefgh")
	if got, want := s.Body([]byte("no\nBearer abcdefgh\x00")), `"no\n`+Mark+`\x00"`; got != want {
		t.Errorf("Body = %s, want %s", got, want)
	}
	// The secret straddles the cut at MaxBody: redacted before the cut.
	body := strings.Repeat("x", MaxBody-5) + "Bearer abcdefgh" + strings.Repeat("y", 100)
	got := s.Body([]byte(body))
	if got != `"`+strings.Repeat("x", MaxBody-5)+`"… (110 more bytes)` {
		t.Errorf("Body = %s", got)
	}
	got = s.Body([]byte(strings.Repeat("x", 300)))
	if got != `"`+strings.Repeat("x", MaxBody)+`"… (100 more bytes)` {
		t.Errorf("Body = %s", got)
	}
}

func TestWalk(t *testing.T) {
	type inner struct {
		Samples []string
		Labels  map[string]string
		Err     string
		hidden  string
	}
	type outer struct {
		Command string
		Phases  []*inner
		ByName  map[string]inner
		Ptr     *string
	}
	sec := "Bearer zzzzzzzz"
	p := "tok zzzzzzzz"
	v := &outer{Command: "brk -H Authorization: " + sec, Ptr: &p,
		Phases: []*inner{{Samples: []string{"ok", "echo zzzz"}, Labels: map[string]string{"a": sec}, Err: sec, hidden: sec}},
		ByName: map[string]inner{"x": {Err: "zzzzzzzz!"}}}
	v.Phases = append(v.Phases, v.Phases[0]) // shared: walked once
	New(sec).Walk(v)
	if v.Command != "brk -H Authorization: "+Mark || v.Phases[0].Samples[1] != "echo "+Mark || v.Phases[0].Labels["a"] != Mark ||
		v.Phases[0].Err != Mark || v.ByName["x"].Err != Mark+"!" || *v.Ptr != "tok "+Mark || v.Phases[0].Samples[0] != "ok" {
		t.Errorf("Walk left %+v %+v %+v %q", v, *v.Phases[0], v.ByName, *v.Ptr)
	}
	if v.Phases[0].hidden != sec {
		t.Error("Walk changed an unexported field")
	}
}
