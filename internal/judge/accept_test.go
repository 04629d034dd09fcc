package judge

import (
	"strings"
	"testing"
)

func TestParseAccept(t *testing.T) {
	cases := []struct {
		in       string
		num, den uint64
		bad      bool
	}{
		{in: "99.99", num: 9999, den: 10000},
		{in: "100", num: 100, den: 100},
		{in: "0", num: 0, den: 100},
		{in: "99.999", num: 99999, den: 100000},
		{in: "50%", num: 50, den: 100},
		{in: ".5", num: 5, den: 1000},
		{in: "100.1", bad: true},
		{in: "abc", bad: true},
		{in: "-1", bad: true},
		{in: "1e2", bad: true},
		{in: "", bad: true},
		{in: "99.1234567890", bad: true},
	}
	for _, c := range cases {
		a, err := ParseAccept(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("%q: accepted as %v", c.in, a)
			} else if strings.Contains(err.Error(), "--") {
				t.Errorf("%q: error %q names a flag; its caller says what the text was", c.in, err)
			}
			continue
		}
		if err != nil || a.Num != c.num || a.Den != c.den {
			t.Errorf("%q: got %d/%d %v, want %d/%d", c.in, a.Num, a.Den, err, c.num, c.den)
		}
	}
}

func TestAcceptMetIsExact(t *testing.T) {
	a, _ := ParseAccept("99.99")
	cases := []struct {
		succ, att uint64
		want      bool
	}{
		{9999, 10000, true},
		{9998, 10000, false},
		{99990, 100000, true},
		{99989, 100000, false},
		{0, 0, false}, // zero attempts are never accepted
		{1, 1, true},
		{1 << 62, 1 << 62, true}, // no overflow
		{1<<62 - 1, 1 << 62, true},
	}
	for _, c := range cases {
		if got := a.Met(c.succ, c.att); got != c.want {
			t.Errorf("Met(%d, %d) = %v, want %v", c.succ, c.att, got, c.want)
		}
	}
	all, _ := ParseAccept("100")
	if all.Met(999999, 1000000) {
		t.Error("100% accepted a failure")
	}
	none, _ := ParseAccept("0")
	if !none.Met(0, 5) {
		t.Error("0% rejected a phase with attempts")
	}
}
