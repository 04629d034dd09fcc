package remotewrite

import (
	"context"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestConfigValidation(t *testing.T) {
	ok := Config{URL: "http://127.0.0.1:9090/api/v1/write", Edges: []float64{0.1}}
	for _, c := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"ok", func(*Config) {}, ""},
		{"native needs no edges", func(c *Config) { c.Native, c.Edges = true, nil }, ""},
		{"job and instance are the user's", func(c *Config) { c.Labels = map[string]string{"job": "brk", "instance": "a"} }, ""},
		{"scheme", func(c *Config) { c.URL = "ftp://x/" }, "want http"},
		{"no host", func(c *Config) { c.URL = "http:///x" }, "want http"},
		{"label syntax", func(c *Config) { c.Labels = map[string]string{"a-b": "x"} }, "label name"},
		{"label reserved", func(c *Config) { c.Labels = map[string]string{"__x": "x"} }, "label name"},
		{"label brk's", func(c *Config) { c.Labels = map[string]string{"run_id": "x"} }, "brk sets itself"},
		{"no edges", func(c *Config) { c.Edges = nil }, "needs bucket edges"},
		{"edges order", func(c *Config) { c.Edges = []float64{0.2, 0.1} }, "ascending"},
		{"edge inf", func(c *Config) { c.Edges = []float64{math.Inf(1)} }, "finite"},
		{"interval", func(c *Config) { c.Interval = -1 }, "negative"},
	} {
		cfg := ok
		c.edit(&cfg)
		p, err := New(cfg)
		if p != nil {
			p.Close(context.Background())
		}
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
	}
}

func TestBuckets(t *testing.T) {
	for _, c := range []struct {
		timeout, maxP99 time.Duration
		must            []float64
		top             float64
	}{
		{2 * time.Second, 0, []float64{0.0001, 0.001, 0.5, 1, 2}, 2},
		{1500 * time.Millisecond, 130 * time.Millisecond, []float64{0.13, 1.5, 1}, 1.5},
		{0, 0, []float64{0.0001, 10}, 10},
		{time.Second, 3 * time.Second, []float64{1, 2, 3}, 3},
	} {
		b := Buckets(c.timeout, c.maxP99)
		if !sort.Float64sAreSorted(b) || slices.Compact(slices.Clone(b)) == nil || len(slices.Compact(slices.Clone(b))) != len(b) {
			t.Errorf("Buckets(%v, %v) = %v: not ascending and distinct", c.timeout, c.maxP99, b)
		}
		for _, m := range c.must {
			if !slices.Contains(b, m) {
				t.Errorf("Buckets(%v, %v) = %v lacks %v", c.timeout, c.maxP99, b, m)
			}
		}
		if b[len(b)-1] != c.top {
			t.Errorf("Buckets(%v, %v) tops at %v, want %v", c.timeout, c.maxP99, b[len(b)-1], c.top)
		}
		if _, err := (Config{URL: "http://x", Edges: b}).validate(); err != nil {
			t.Errorf("Buckets(%v, %v) invalid: %v", c.timeout, c.maxP99, err)
		}
	}
}
