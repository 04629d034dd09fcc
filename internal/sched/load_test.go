package sched

import (
	"strings"
	"testing"

	"github.com/brk-bench/brk/internal/judge"
)

// TestLoadChecks: each test's engine value refuses what the engine cannot
// run, and a nil Config.Load is the requests test.
func TestLoadChecks(t *testing.T) {
	for _, c := range []struct {
		name string
		load Load
		want string // "" accepted, else a part of the refusal
	}{
		{"requests", RequestsLoad{}, ""},
		{"connections with requests", ConnectionsLoad{PerConn: 1}, ""},
		{"connections kept alive", ConnectionsLoad{KeepAlive: true}, ""},
		{"connections without requests", ConnectionsLoad{}, "requests per connection"},
		{"rate", RateLoad{Depth: 1}, ""},
		{"rate shard", RateLoad{Depth: 1, ShardIndex: 2, Shards: 3}, ""},
		{"rate without depth", RateLoad{}, "depth per connection"},
		{"rate shard past its count", RateLoad{Depth: 1, ShardIndex: 3, Shards: 3}, "shard index"},
		{"rate shard index without shards", RateLoad{Depth: 1, ShardIndex: 1}, "shard index"},
		{"rate negative shards", RateLoad{Depth: 1, Shards: -1}, "shard index"},
	} {
		err := c.load.check()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want a refusal naming %q", c.name, err, c.want)
		}
	}
	if m := (&Config{}).load().Mode(); m != judge.Requests {
		t.Errorf("a nil Config.Load runs the %s test, want requests", m)
	}
}

// TestLoadSplitsTheLevel: the connections test splits a level over the
// workers, the first ones taking the remainder; the requests and rate
// tests give every worker the whole level (connections, or the schedule's
// arrivals, are what is split). The owners in use follow.
func TestLoadSplitsTheLevel(t *testing.T) {
	for _, c := range []struct {
		load        Load
		level, n    int
		want        []int
		cfg         Config
		inUse, used int // a level, and its owners in use
	}{
		{ConnectionsLoad{PerConn: 1}, 7, 3, []int{3, 2, 2}, Config{Conns: 1}, 5, 5},
		{ConnectionsLoad{PerConn: 1}, 2, 3, []int{1, 1, 0}, Config{Conns: 1}, 0, 0},
		{RequestsLoad{}, 12, 2, []int{12, 12}, Config{Conns: 4, ConnBase: 4}, 6, 2},
		{RequestsLoad{}, 12, 2, []int{12, 12}, Config{Conns: 4, ConnBase: 4}, 3, 0},
		{RequestsLoad{}, 12, 2, []int{12, 12}, Config{Conns: 4}, 12, 4},
		{RateLoad{Depth: 1}, 500, 2, []int{500, 500}, Config{Conns: 8}, 500, 8},
	} {
		sum := 0
		for i, want := range c.want {
			got := c.load.share(c.level, i, c.n)
			sum += got
			if got != want {
				t.Errorf("%T: worker %d of %d takes %d of level %d, want %d", c.load, i, c.n, got, c.level, want)
			}
		}
		if _, ok := c.load.(ConnectionsLoad); ok && sum != c.level {
			t.Errorf("%T: shares sum to %d, want the level %d", c.load, sum, c.level)
		}
		if got := c.load.inUse(&c.cfg, c.inUse); got != c.used {
			t.Errorf("%T: %d owners of %+v in use at level %d, want %d", c.load, got, c.cfg, c.inUse, c.used)
		}
	}
}
