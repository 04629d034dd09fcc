package targets

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse, seeded from the tables, asserts that parse never panics, that every error is an
// *Error naming the file and a line of the input, that every accepted
// mix keeps the rules, and that a second parse gives the same result.
func FuzzParse(f *testing.F) {
	for _, c := range acceptCases {
		f.Add([]byte(c.in))
	}
	for _, c := range refuseCases {
		if len(c.in) <= 4096 {
			f.Add([]byte(c.in))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := parse(in, "f.txt", "d", testFiles.read)
		lines := strings.Count(string(in), "\n") + 1
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.File != "f.txt" || e.Line < 1 || e.Line > lines || !strings.HasPrefix(err.Error(), "f.txt:") {
				t.Fatalf("error %q (%#v) does not name the file and a line in 1..%d", err, e, lines)
			}
			if got != nil {
				t.Fatalf("targets with an error: %v", got)
			}
		} else {
			if len(got) == 0 || len(got) > MaxTargets {
				t.Fatalf("%d targets", len(got))
			}
			for _, tg := range got {
				if tg.Weight < 1 || tg.Weight > MaxWeight || tg.Line < 1 || tg.Line > lines {
					t.Fatalf("target %#v", tg)
				}
				if err := checkMethod(tg.Method); err != nil {
					t.Fatalf("method: %v", err)
				}
				if o, err := checkURL(tg.URL); err != nil || o == "" {
					t.Fatalf("URL %q: %v", tg.URL, err)
				}
				for _, c := range tg.ExpectStatus {
					if c < 100 || c > 599 {
						t.Fatalf("status %d", c)
					}
				}
				for _, h := range tg.Header {
					if !isToken(h[0]) || h[1] == "" || badValueByte(h[1]) >= 0 {
						t.Fatalf("header %q", h)
					}
				}
			}
		}
		again, err2 := parse(in, "f.txt", "d", testFiles.read)
		if !reflect.DeepEqual(got, again) || (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("unstable: %v / %v", err, err2)
		}
	})
}
