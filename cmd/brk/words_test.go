package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/internal/testenv"
)

// TestFlagNamesCoverFields: every field of brk.Plan and brk.Target (and
// of the TLSOptions and Sharding they hold, and of the Loads and Ramps a
// Plan holds), which a brk.PlanError may name, has its wording in flagNames,
// and flagNames names no other.
func TestFlagNamesCoverFields(t *testing.T) {
	fields := map[string]bool{}
	var walk func(prefix string, ty reflect.Type)
	walk = func(prefix string, ty reflect.Type) {
		for ty.Kind() == reflect.Pointer {
			ty = ty.Elem()
		}
		for i := range ty.NumField() {
			f := ty.Field(i)
			if !f.IsExported() {
				continue
			}
			sel := prefix + "." + f.Name
			fields[sel] = true
			switch f.Type {
			case reflect.TypeFor[brk.TLSOptions](), reflect.TypeFor[*brk.Sharding](), reflect.TypeFor[*brk.Search]():
				walk(sel, f.Type)
			}
		}
	}
	walk("Plan", reflect.TypeFor[brk.Plan]())
	walk("Target", reflect.TypeFor[brk.Target]())
	walk("Requests", reflect.TypeFor[brk.Requests]())
	walk("Connections", reflect.TypeFor[brk.Connections]())
	walk("Rate", reflect.TypeFor[brk.Rate]())
	walk("Linear", reflect.TypeFor[brk.Linear]())
	walk("Search", reflect.TypeFor[brk.Search]())
	for f := range fields {
		if flagNames[f] == "" {
			t.Errorf("%s has no wording in flagNames", f)
		}
	}
	for f := range flagNames {
		if !fields[f] {
			t.Errorf("flagNames words %s, which is no field of brk.Plan or brk.Target", f)
		}
	}
}

// TestAcceptFlag: --accept's text becomes the library's number that
// spells the same fraction; 0 becomes brk.AcceptAny.
func TestAcceptFlag(t *testing.T) {
	for text, want := range map[string]float64{
		"99.99": 99.99, "99.99%": 99.99, " 99.9 % ": 99.9, "99.990": 99.99, "100": 100,
		"0.5": 0.5, ".5": 0.5, "0": brk.AcceptAny, "0.000": brk.AcceptAny, "99.999999999": 99.999999999,
	} {
		f := loadFlags{Accept: text}
		got, err := f.accept()
		if err != nil || got != want {
			t.Errorf("--accept %q: %v %v, want %v", text, got, err, want)
		}
	}
	for text, want := range map[string]string{
		"abc":   `--accept "abc": want a percentage such as 99.99`,
		"101":   `--accept "101": must be at most 100`,
		"-1":    `--accept "-1": want a percentage such as 99.99`,
		"1e2":   `--accept "1e2": want a percentage such as 99.99`,
		"100.5": `--accept "100.5": must be at most 100`,
	} {
		f := loadFlags{Accept: text}
		if _, err := f.accept(); err == nil || err.Error() != want {
			t.Errorf("--accept %q: error %v, want %s", text, err, want)
		}
	}
}

// TestAcceptReport: the JSON report's accept_pct keeps its text form (and
// plan.accept_pct its number) whatever text --accept was given, and the
// header shows the percentage.
func TestAcceptReport(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	fx := startFixture(t, bench.FixtureConfig{})
	dir := t.TempDir()
	for i, c := range []struct {
		flag, text string
		num        float64
	}{{"99.99%", "99.99", 99.99}, {"0", "0", 0}, {"99.990", "99.99", 99.99}} {
		path := filepath.Join(dir, "r"+string(rune('0'+i))+".json")
		r := runBrk(t, fx.URL("/plain"), "--conn", "1", "--max", "1", "--phase", "200ms", "--threads", "1",
			"--accept", c.flag, "--json", path)
		if r.code != 0 {
			t.Fatalf("--accept %s: exit %d\n%s", c.flag, r.code, r)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Accept any `json:"accept_pct"`
			Plan   struct {
				Accept any `json:"accept_pct"`
			} `json:"plan"`
		}
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Accept != c.text || rep.Plan.Accept != c.num {
			t.Errorf("--accept %s: accept_pct %#v, plan.accept_pct %#v; want %q and %v", c.flag, rep.Accept, rep.Plan.Accept, c.text, c.num)
		}
		if want := "SLA: " + c.text + " % succeed"; !strings.Contains(r.stdout, want) {
			t.Errorf("--accept %s: no %q in the header\n%s", c.flag, want, r)
		}
	}
}

// TestRateSlotWarningWording: the library's Little's-law warning, in flag
// words, exactly as brk printed it before the library spoke its own.
func TestRateSlotWarningWording(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--conn", "2", "--start", "1000"},
			"brk: warning: --conn 2 × --rate-depth 1 = 2 slots is below --start 1000 requests/s × --timeout 1s = 1000 outstanding (Little's law): from 2 requests/s on, a slow response can fail the run from a lack of slots alone"},
		{[]string{"--conn", "2", "--start", "10", "--max", "3000", "--rate-depth", "3", "--timeout", "1500ms"},
			"brk: warning: --conn 2 × --rate-depth 3 = 6 slots is below --max 3000 requests/s × --timeout 1.5s = 4500 outstanding (Little's law): from 4 requests/s on, a slow response can fail the run from a lack of slots alone"},
	} {
		// Nothing listens on port 1: the run ends inconclusive at once.
		r := runBrk(t, append([]string{"rate", "http://127.0.0.1:1/plain", "--phase", "100ms", "--quiet"}, c.args...)...)
		if first, _, _ := strings.Cut(r.stderr, "\n"); first != c.want {
			t.Errorf("first stderr line\n got %q\nwant %q\n%s", first, c.want, r)
		}
	}
}
