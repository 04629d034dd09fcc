package h2

import (
	"errors"
	"fmt"

	"golang.org/x/net/http2"
)

// Error is a connection error: the peer broke the protocol. Its code is
// the one the GOAWAY that ends the connection carries.
type Error struct {
	Code   http2.ErrCode
	Reason string
}

func (e *Error) Error() string { return "h2 " + e.Code.String() + ": " + e.Reason }

func connErr(code http2.ErrCode, format string, args ...any) error {
	return &Error{Code: code, Reason: fmt.Sprintf(format, args...)}
}

// framerErr names an error of the Framer.
func framerErr(fr *http2.Framer, err error) error {
	reason := ""
	if d := fr.ErrorDetail(); d != nil {
		reason = d.Error()
	}
	var ce http2.ConnectionError
	var se http2.StreamError
	switch {
	case errors.As(err, &ce):
		if reason == "" {
			reason = "invalid frame"
		}
		return &Error{Code: http2.ErrCode(ce), Reason: reason}
	case errors.As(err, &se):
		return &Error{Code: se.Code, Reason: se.Error()}
	case errors.Is(err, http2.ErrFrameTooLarge):
		return &Error{Code: http2.ErrCodeFrameSize, Reason: "frame too large"}
	}
	return &Error{Code: http2.ErrCodeProtocol, Reason: err.Error()}
}
