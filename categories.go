package brk

import "github.com/brk-bench/brk/internal/metrics"

// FailureCategories returns the names of the failure categories in report
// order, as package metrics names them. They are the JSON names of Counts'
// failure fields, and every table of failures (the text report, the HTML
// report, the live progress line) takes its rows or columns from this list
// rather than naming the categories again.
func FailureCategories() []string {
	names := make([]string, 0, metrics.NumCategories)
	for _, c := range metrics.Categories() {
		names = append(names, c.String())
	}
	return names
}

// Failure returns c's count of the failure category named category (one of
// FailureCategories), or 0 for a name that is not a category.
func (c Counts) Failure(category string) uint64 {
	for _, cat := range metrics.Categories() {
		if cat.String() == category {
			return *c.failures()[cat]
		}
	}
	return 0
}

// failures points at c's failure fields by category: the one place that
// ties a metrics category to its Counts field (and so to its JSON name).
func (c *Counts) failures() [metrics.NumCategories]*uint64 {
	return [metrics.NumCategories]*uint64{
		metrics.Timeout:        &c.Timeout,
		metrics.Transport:      &c.Transport,
		metrics.Abandoned:      &c.Abandoned,
		metrics.Connect:        &c.Connect,
		metrics.ConnectTimeout: &c.ConnectTimeout,
		metrics.Status:         &c.Status,
		metrics.Body:           &c.Body,
		metrics.Protocol:       &c.Protocol,
	}
}

// setFailures sets every failure field of c to f(category).
func (c *Counts) setFailures(f func(metrics.Category) uint64) {
	for cat, p := range c.failures() {
		*p = f(metrics.Category(cat))
	}
}
