// Package targets reads a request mix from a targets file: vegeta's HTTP
// target format plus two directive lines, weight and expect-status.
//
// A target is a request line "METHOD URL", then header lines "Name: value",
// then optionally one body line "@path" (relative to the targets file's
// directory). A blank line or the next request line ends a target. Lines
// starting with "#" are comments, except the directives, which apply to the
// next target:
//
//	# weight 2
//	# expect-status 200,201
//	POST http://127.0.0.1:8080/orders
//	Content-Type: application/json
//	@order.json
//
//	GET http://127.0.0.1:8080/health
//
// Lines are trimmed of ASCII whitespace; CRLF line ends and a UTF-8 byte
// order mark are accepted. A directive's keyword is matched without regard
// to case, so a comment must not start with the word "weight" or
// "expect-status"; a directive inside an open target ends that target (it applies
// to the next one); other "#" lines, anywhere, are comments, so a line
// starting with "#" is never a header. Blank lines may separate directives
// from their target.
//
// Where this reader differs from vegeta's (tsenart/vegeta lib/targets.go):
// the method is one of Methods, not any upper-case word; the URL must be
// absolute http:// or https://, on the first target's origin; body paths
// are relative to the targets file's directory, not the working directory;
// a header with whitespace before its colon is refused (RFC 9112 §5.1)
// rather than trimmed; a comment inside a target is skipped rather than
// read as a header; and a request line right after a header line starts a
// new target rather than being read as a header. Like vegeta, a header
// needs a non-empty value, and the body line ends a target's header lines.
//
// Parse validates everything before any traffic: every error names the file
// and the line, and says what to write instead.
package targets

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// MaxTargets bounds the targets of one file. Each worker keeps, per target
// and phase, its outcome counters and a latency histogram (1 µs..60 s at 3
// digits, about 136 KiB), so 64 targets cost about 9 MiB per worker; the
// bound keeps that memory fixed and known at plan time.
const MaxTargets = 64

// MaxWeight is the largest weight of a target. With MaxTargets it bounds
// one period of the weighted sequence to 64 000 entries.
const MaxWeight = 1000

// MaxFileBytes bounds the targets file itself (it is read whole).
const MaxFileBytes = 4 << 20

// MaxBodyBytes bounds one body file: every body is held in memory and
// encoded once per target.
const MaxBodyBytes = 16 << 20

// Methods are the request methods a target may use, in the spelling the
// request line must have (methods are case-sensitive, RFC 9110 §9.1).
var Methods = []string{"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"}

// Target is one request of the mix, as written in the file.
type Target struct {
	// Method is one of Methods.
	Method string
	// URL is the absolute http:// or https:// URL as written.
	URL string
	// Header holds the header lines in file order, name as written and
	// value without surrounding whitespace.
	Header [][2]string
	// Body is the body file's content; nil when the target has no body
	// line, non-nil (possibly empty) when it has one.
	Body []byte
	// BodyFile is the body line's path as read: joined to the targets
	// file's directory unless absolute; "" without a body line.
	BodyFile string
	// Weight is the target's share of the mix, 1..MaxWeight (default 1).
	Weight int
	// ExpectStatus are the status codes accepted for this target from an
	// expect-status directive; nil means the run's default.
	ExpectStatus []int
	// Line is the 1-based line of the request line.
	Line int
}

// Error is a refusal of a targets file at one line.
type Error struct {
	File string // the name given to Parse
	Line int    // 1-based
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Parse reads a targets file from r. name is how errors name the file
// (e.g. "targets.txt", or "stdin"); dir is the directory body paths are
// relative to (the targets file's directory; "" for the working directory).
// It reads body files from the file system; everything else is a function
// of the bytes read. Errors are *Error.
func Parse(r io.Reader, name, dir string) ([]Target, error) {
	src, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, &Error{File: fileName(name), Line: 1, Msg: fmt.Sprintf("cannot read the targets file: %v", err)}
	}
	return parse(src, name, dir, readBody)
}

// readBody reads at most MaxBodyBytes+1 bytes of the file at path.
func readBody(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, errors.New("is a directory")
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxBodyBytes+1))
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// bodyPath is where a body line's path is read from.
func bodyPath(dir, p string) string {
	if filepath.IsAbs(p) || dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}

func fileName(name string) string {
	if name == "" {
		return "targets"
	}
	return name
}
