// Package shard runs one plan on several load boxes: each process is
// shard I of N of the plan, its phases start at absolute boundaries shared
// by every shard, and shard 0 coordinates: it merges every shard's phase
// measurement, judges the merged phase with the same verdict code as a
// single box (judge.Judge), and tells every shard to go on or stop.
//
// The Lockstep of this package stands in for the engine under sched's Ramp:
// it runs the local engine's part of a phase, sends the measurement to the
// coordinator, and returns the merged measurement, so the whole verdict
// code runs unchanged on every shard.
package shard

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Spec says which part of the plan this process runs: shard Index of
// Count (0 <= Index < Count).
type Spec struct {
	Index, Count int
}

// MaxShards bounds the shard count.
const MaxShards = 1024

// String is "I/N".
func (s Spec) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Valid reports whether s names a shard.
func (s Spec) Valid() error {
	switch {
	case s.Count < 1 || s.Count > MaxShards:
		return fmt.Errorf("the shard count must be between 1 and %d", MaxShards)
	case s.Index < 0 || s.Index >= s.Count:
		return fmt.Errorf("shard index %d is not in 0..%d", s.Index, s.Count-1)
	}
	return nil
}

// ParseSpec parses "I/N".
func ParseSpec(v string) (Spec, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(v), "/")
	if !ok {
		return Spec{}, fmt.Errorf("shard %q: want I/N, e.g. 0/3", v)
	}
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil {
		return Spec{}, fmt.Errorf("shard %q: want I/N, e.g. 0/3", v)
	}
	s := Spec{Index: i, Count: n}
	if err := s.Valid(); err != nil {
		return Spec{}, fmt.Errorf("shard %q: %v", v, err)
	}
	return s, nil
}

// IndexEnv is the variable a Kubernetes Indexed Job sets in each pod.
const IndexEnv = "JOB_COMPLETION_INDEX"

// ErrNoIndexEnv is FromEnv's error when IndexEnv is not set.
var ErrNoIndexEnv = errors.New(IndexEnv + " is not set")

// FromEnv makes shard JOB_COMPLETION_INDEX of count.
func FromEnv(count int) (Spec, error) {
	v, ok := os.LookupEnv(IndexEnv)
	if !ok {
		return Spec{}, fmt.Errorf("%w (a Kubernetes Indexed Job sets it): %d shards need each shard's index", ErrNoIndexEnv, count)
	}
	i, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return Spec{}, fmt.Errorf("%s=%q is not an index", IndexEnv, v)
	}
	s := Spec{Index: i, Count: count}
	if err := s.Valid(); err != nil {
		return Spec{}, fmt.Errorf("%s=%q of %d shards: %v", IndexEnv, v, count, err)
	}
	return s, nil
}

// Share is shard i's part of total items split over n shards: the first
// total mod n shards take one more. The shares of 0..n-1 sum to total.
func Share(total, i, n int) int {
	s := total / n
	if i < total%n {
		s++
	}
	return s
}

// OwnsArrival reports whether arrival k (0-based, of the one schedule every
// shard computes) is this shard's: arrivals k ≡ Index (mod Count). It is
// the rate test's split, as the engine deals it (sched.Config.ShardIndex
// and Shards; sched's TestScheduleShardSplit checks the arrivals it takes).
func (s Spec) OwnsArrival(k uint64) bool {
	return s.Count <= 1 || k%uint64(s.Count) == uint64(s.Index)
}

// ParseStartAt parses a start time (Config.StartAt; the brk command's
// --start-at): RFC 3339 (with a zone) or Unix milliseconds.
func ParseStartAt(v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, errors.New("the start time is empty")
	}
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		if ms <= 0 {
			return time.Time{}, fmt.Errorf("start time %q: want a positive Unix time in milliseconds", v)
		}
		return time.UnixMilli(ms), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("start time %q: want RFC 3339 (2026-01-02T15:04:05Z) or Unix milliseconds", v)
	}
	return t, nil
}
