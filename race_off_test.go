//go:build !race

package brk_test

const raceEnabled = false
