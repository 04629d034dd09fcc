package brk

// Request is one target of a request mix (Target.Mix): what one request
// sends and what its response must carry. A request mix is what vegeta's
// target file describes (brk's --targets reads that format).
type Request struct {
	Method  string   // "" = GET, or POST when Body is set
	URL     string   // absolute; every request of a mix shares one origin (scheme, host, port)
	Headers []Header // this request's headers, after the Target's
	Body    []byte   // nil = none
	// Weight is this request's share of the mix (1..MaxWeight; 0 = 1).
	Weight int
	// ExpectStatus lists the status codes accepted for this request;
	// empty = the Target's ExpectStatus.
	ExpectStatus []int
}

// TargetStats is one target's share of a phase in a request mix: what it
// was sent and how it fared. The phase's verdict is judged on all targets
// together; these say which one failed.
type TargetStats struct {
	Index  int    `json:"index"` // the target's position in the mix (0-based, file order)
	Method string `json:"method"`
	URL    string `json:"url"`
	Weight int    `json:"weight"`
	Counts Counts `json:"counts"`
	// StatusCodes counts complete responses by status code, whatever
	// their outcome.
	StatusCodes map[string]uint64 `json:"status_codes"`
	SuccessPct  float64           `json:"success_pct"`
	LatencyMs   Latency           `json:"latency_ms"`
	// LatencyHdr is the target's latency histogram, encoded as the
	// phase's LatencyHdr is, so shards' reports merge exactly.
	LatencyHdr string `json:"latency_hdr"`
}
