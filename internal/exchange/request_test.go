package exchange

import "testing"

func TestEffectiveMethod(t *testing.T) {
	for _, c := range []struct {
		r    Request
		want string
		head bool
	}{
		{Request{}, "GET", false},
		{Request{Body: []byte{}}, "POST", false},
		{Request{Method: "HEAD"}, "HEAD", true},
		{Request{Method: "head"}, "head", false}, // methods are case-sensitive (RFC 9110 §9.1)
	} {
		if got := c.r.EffectiveMethod(); got != c.want || c.r.IsHead() != c.head {
			t.Errorf("%+v: got %q head=%v", c.r, got, c.r.IsHead())
		}
	}
}
