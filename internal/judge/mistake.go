package judge

import (
	"fmt"
)

// FirstLook is what the mistake rule reads of a run's first phase: its
// measurement (LookOf, for Judge), or the live counters while it runs
// (Engine.admission, to end it early).
type FirstLook struct {
	Established uint64 // setups established
	Attempted   uint64 // requests attempted
	Heard       uint64 // connections that read at least one byte
	Answered    bool   // some request got a complete response
	Succeeded   uint64
	// Status is the code of every complete response: 0 when there was
	// none, or more than one code.
	Status int
}

// Mistake names what a run's first phase says of the request rather than
// of the server's capacity, or "": every complete response the same 3xx,
// or the same 4xx other than 408 and 429, with no success (a typo'd path,
// a redirect to follow); or not a byte from the server on any connection
// established (the wrong port, a TLS port asked in plain text, a timeout
// shorter than any answer). A server that answers every request with the
// same refusal is not overloaded; a 503 or 429 storm, or a 408, is
// judged by the counts.
func (f FirstLook) Mistake(n Names) string {
	switch {
	case f.Succeeded > 0:
		return ""
	case f.Answered && refusal(f.Status):
		return fmt.Sprintf("every response was %s — check the URL, or accept the status with %s", statusName(f.Status), n.ExpectStatus)
	case !f.Answered && f.Established > 0 && f.Attempted > 0 && f.Heard == 0:
		return "not a byte came back from the server on any connection — check the URL and the port, or raise " + n.Timeout + " for a server that slow"
	}
	return ""
}

// refusal reports whether code, answered to every request, is the user's
// mistake rather than an overload: a 3xx, or a 4xx but 408 (Request
// Timeout) and 429 (Too Many Requests).
func refusal(code int) bool {
	return code >= 300 && code < 500 && code != 408 && code != 429
}

// LookOf is the mistake rule's view of a measured phase.
func LookOf(m *Measurement) FirstLook {
	s := m.Stats
	f := FirstLook{
		Established: s.Setups.Established, Attempted: s.Counts.Attempted, Heard: s.Heard,
		Succeeded: s.Counts.Succeeded, Answered: s.LatencyCount > 0,
	}
	for code, n := range s.Statuses {
		if n == 0 {
			continue
		}
		f.Answered = true
		if f.Status != 0 || code == 0 {
			f.Status = -1 // several codes, or one outside 100..599
		} else {
			f.Status = code
		}
	}
	f.Status = max(f.Status, 0)
	return f
}

// mistakeOf is the mistake rule on a run's first phase ("": none), its
// settings named by n.
func mistakeOf(m *Measurement, n Names) string { return LookOf(m).Mistake(n) }

// statusName is a code with its reason phrase (RFC 9110 §15) for the 3xx
// and 4xx the rule names: "404 Not Found", or the code alone.
func statusName(code int) string {
	if t := statusText[code]; t != "" {
		return fmt.Sprintf("%d %s", code, t)
	}
	return fmt.Sprint(code)
}

var statusText = map[int]string{
	300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
	305: "Use Proxy", 307: "Temporary Redirect", 308: "Permanent Redirect",
	400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
	405: "Method Not Allowed", 406: "Not Acceptable", 407: "Proxy Authentication Required",
	409: "Conflict", 410: "Gone", 411: "Length Required", 412: "Precondition Failed", 413: "Content Too Large",
	414: "URI Too Long", 415: "Unsupported Media Type", 416: "Range Not Satisfiable", 417: "Expectation Failed",
	421: "Misdirected Request", 422: "Unprocessable Content", 426: "Upgrade Required",
	428: "Precondition Required", 431: "Request Header Fields Too Large", 451: "Unavailable For Legal Reasons",
}
