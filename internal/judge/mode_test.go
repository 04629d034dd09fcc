package judge

import "testing"

func TestPerConnText(t *testing.T) {
	for _, c := range []struct {
		level, conns int
		want         string
	}{
		{64, 64, "1 per connection"},
		{192, 64, "3 per connection"},
		{200, 64, "8 connections × 4 + 56 × 3"},
		{5, 8, "5 connections × 1, 3 idle"},
	} {
		if got := PerConnText(c.level, c.conns); got != c.want {
			t.Errorf("PerConnText(%d, %d) = %q, want %q", c.level, c.conns, got, c.want)
		}
	}
}
