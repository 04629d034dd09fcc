package metrics

import (
	"encoding/json"
	"strconv"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Map returns the non-zero counts keyed by status code ("other" for codes
// outside 100..599).
func (c *StatusCounts) Map() map[string]uint64 {
	m := map[string]uint64{}
	for i, v := range c {
		if v == 0 {
			continue
		}
		if i == 0 {
			m["other"] = v
		} else {
			m[strconv.Itoa(i)] = v
		}
	}
	return m
}

// MarshalJSON writes the non-zero counts as an object.
func (c *StatusCounts) MarshalJSON() ([]byte, error) { return json.Marshal(c.Map()) }

// UnmarshalJSON reads what MarshalJSON wrote.
func (c *StatusCounts) UnmarshalJSON(b []byte) error {
	var m map[string]uint64
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*c = StatusCounts{}
	for k, v := range m {
		code, err := strconv.Atoi(k)
		if err != nil || code < 100 || code >= len(c) {
			code = 0
		}
		c[code] += v
	}
	return nil
}

// phaseJSON is Phase's wire form: the histograms encoded.
type phaseJSON struct {
	*phaseFields
	LatencyHdr      string `json:"latency_hdr"`
	SetupLatencyHdr string `json:"setup_latency_hdr"`
	SendLagHdr      string `json:"send_lag_hdr,omitempty"`
	ServiceHdr      string `json:"service_hdr,omitempty"`
	ClientLagHdr    string `json:"client_lag_hdr,omitempty"`
}

type phaseFields Phase

// MarshalJSON encodes p with its histograms.
func (p *Phase) MarshalJSON() ([]byte, error) {
	lat, err := EncodeHistogram(p.Latency)
	if err != nil {
		return nil, err
	}
	setup, err := EncodeHistogram(p.SetupLatency)
	if err != nil {
		return nil, err
	}
	v := phaseJSON{phaseFields: (*phaseFields)(p), LatencyHdr: lat, SetupLatencyHdr: setup}
	if p.SendLag != nil {
		for _, e := range []struct {
			h   *hdrhistogram.Histogram
			out *string
		}{{p.SendLag, &v.SendLagHdr}, {p.Service, &v.ServiceHdr}, {p.ClientLag, &v.ClientLagHdr}} {
			if *e.out, err = EncodeHistogram(e.h); err != nil {
				return nil, err
			}
		}
	}
	return json.Marshal(v)
}

// UnmarshalJSON decodes a phase encoded by MarshalJSON.
func (p *Phase) UnmarshalJSON(b []byte) error {
	var v phaseJSON
	v.phaseFields = (*phaseFields)(p)
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	var err error
	if p.Latency, err = DecodeHistogram(v.LatencyHdr); err != nil {
		return err
	}
	if p.SetupLatency, err = DecodeHistogram(v.SetupLatencyHdr); err != nil {
		return err
	}
	p.SendLag, p.Service, p.ClientLag = nil, nil, nil
	if v.SendLagHdr == "" {
		return nil
	}
	if p.SendLag, err = DecodeHistogram(v.SendLagHdr); err != nil {
		return err
	}
	if p.Service, err = DecodeHistogram(v.ServiceHdr); err != nil {
		return err
	}
	p.ClientLag, err = DecodeHistogram(v.ClientLagHdr)
	return err
}

// EncodeHistogram returns h in HdrHistogram's base64 V2 compressed
// encoding.
func EncodeHistogram(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	return string(b), err
}

// DecodeHistogram decodes EncodeHistogram's text; "" is an empty
// histogram.
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	if s == "" {
		return NewHistogram(), nil
	}
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, err
	}
	// Merge into the standard range so that decoded phases merge alike.
	out := NewHistogram()
	out.Merge(h)
	return out, nil
}
