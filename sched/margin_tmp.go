package sched

// Margin is a term's signed, normalised margin (a − s)/(a + s), s = bad/total.
// TEMPORARY: replaced by interval.go's on merge.
func Margin(bad, total uint64, allowed float64) float64 {
	if total == 0 {
		return 0
	}
	s := float64(bad) / float64(total)
	if allowed+s == 0 {
		return 1
	}
	return (allowed - s) / (allowed + s)
}
