package report

// What a level counts depends on the test. Presentation learns the test
// from its name as Result.Test gives it ("requests", "connections"); the
// engine's own flag (brk.PhaseStats' unexported connTest) is not visible
// here, and the JSON report carries only the name.
//
// MODE: this file is the single place presentation reads the test's name.
// When brk gets a Mode type, these functions take it instead of a string.

// connectionsTest reports whether test is the connections test, whose
// levels are concurrent connections rather than concurrent requests.
func connectionsTest(test string) bool { return test == "connections" }

// levelUnit is what a level of test counts, e.g. "concurrent requests".
func levelUnit(test string) string {
	if connectionsTest(test) {
		return "concurrent connections"
	}
	return "concurrent requests"
}

// finalUnit is the unit of the level on the final line (FinalLine).
func finalUnit(test string) string {
	switch {
	case connectionsTest(test):
		return "connections"
	case test == "rate":
		return "requests/s"
	}
	return "concurrent requests"
}
