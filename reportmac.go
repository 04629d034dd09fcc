package brk

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// A shard's JSON report carries an HMAC under the shared token (BRK_TOKEN)
// of its canonical form: the report decoded (numbers kept as written),
// without its top-level "hmac" member, and encoded again by encoding/json,
// which writes every object's members in sorted key order with no
// whitespace. The canonical form does not depend on indentation or member
// order; any edited value changes it. The MAC is HMAC-SHA256(token,
// "brk-report-1" NUL canonical form), in hex.

// ErrUnsigned is a report without an "hmac" member.
var ErrUnsigned = errors.New("the report carries no HMAC")

// CanonicalReport is a JSON report's canonical form (see above).
func CanonicalReport(report []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(report))
	d.UseNumber()
	var v map[string]any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("not a JSON report: %v", err)
	}
	delete(v, "hmac")
	return json.Marshal(v)
}

// ReportMAC is the HMAC of a JSON report's canonical form under token.
func ReportMAC(report []byte, token string) (string, error) {
	c, err := CanonicalReport(report)
	if err != nil {
		return "", err
	}
	h := hmac.New(sha256.New, []byte(token))
	h.Write([]byte("brk-report-1\x00"))
	h.Write(c)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Sign sets r.HMAC to the HMAC under token of r's JSON report.
func (r *Result) Sign(token string) error {
	r.HMAC = ""
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	r.HMAC, err = ReportMAC(b, token)
	return err
}

// VerifyReport checks a JSON report's "hmac" against token: ErrUnsigned
// when it has none, an error when it differs (the report was edited, or
// signed under another token).
func VerifyReport(report []byte, token string) error {
	var v struct {
		HMAC string `json:"hmac"`
	}
	if err := json.Unmarshal(report, &v); err != nil {
		return fmt.Errorf("not a JSON report: %v", err)
	}
	if v.HMAC == "" {
		return ErrUnsigned
	}
	want, err := ReportMAC(report, token)
	if err != nil {
		return err
	}
	if !hmac.Equal([]byte(v.HMAC), []byte(want)) {
		return errors.New("its HMAC does not match: the report was edited, or signed under another BRK_TOKEN")
	}
	return nil
}
