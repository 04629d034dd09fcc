package bench

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMatrixOrder(t *testing.T) {
	m := Matrix{Protocols: []string{"h1"}, Connections: []int{64, 128}, Depths: []int{1, 8}}
	str := func(cs []Combo) string {
		var s []string
		for _, c := range cs {
			s = append(s, fmt.Sprintf("%s/%d/%d", c.Protocol, c.Connections, c.Depth))
		}
		return strings.Join(s, " ")
	}
	fwd := "h1/64/1 h1/64/8 h1/128/1 h1/128/8"
	rev := "h1/128/8 h1/128/1 h1/64/8 h1/64/1"
	for rep, want := range map[int]string{1: fwd, 2: rev, 3: fwd, 4: rev} {
		if got := str(m.Order(rep)); got != want {
			t.Errorf("repetition %d: %s, want %s", rep, got, want)
		}
	}
}

func TestCheckProtocols(t *testing.T) {
	for _, ps := range [][]string{{"h1"}, {"h2c"}, {"h1", "h2c", "h2-tls"}} {
		if err := CheckProtocols(ps); err != nil {
			t.Errorf("%v: %v", ps, err)
		}
	}
	for _, ps := range [][]string{nil, {"h3"}, {"h1", "h1"}} {
		if CheckProtocols(ps) == nil {
			t.Errorf("%v accepted", ps)
		}
	}
}

func TestMatrixCheck(t *testing.T) {
	ok := Matrix{Protocols: []string{"h1"}, Connections: []int{2}, Depths: []int{1}, Threads: 1,
		Phase: time.Second, Timeout: time.Second, Repeat: 1, Fixture: []string{"x"}}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	bad := map[string]func(*Matrix){
		"threads over conns": func(m *Matrix) { m.Threads = 3 },
		"no depths":          func(m *Matrix) { m.Depths = nil },
		"depth 0":            func(m *Matrix) { m.Depths = []int{0} },
		"repeat 0":           func(m *Matrix) { m.Repeat = 0 },
		"no responder":       func(m *Matrix) { m.Fixture = nil },
		"bad url":            func(m *Matrix) { m.URL = "ftp://x/" },
	}
	for name, f := range bad {
		m := ok
		m.Depths = slices.Clone(ok.Depths)
		f(&m)
		if m.Check() == nil {
			t.Errorf("%s accepted", name)
		}
	}
}
