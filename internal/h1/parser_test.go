package h1

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// resp is the observable result of one completed response.
type resp struct {
	Status   int
	Close    bool
	BodyOK   bool
	BodyLen  int64
	Consumed int
}

// outcome is the observable result of parsing a whole stream.
type outcome struct {
	Resps []resp
	Err   string // reason of the final error, "" if none
}

func (o outcome) String() string { return fmt.Sprintf("{Resps:%+v Err:%q}", o.Resps, o.Err) }

// parseStream feeds chunks to one parser, parsing consecutive responses
// (Reset after each), then signals EOF.
func parseStream(chunks [][]byte, head bool, expect []byte, check bool) outcome {
	var p Parser
	p.SetExpectBody(expect, check)
	p.Reset(head)
	var o outcome
	total, start := 0, 0
	finish := func() {
		o.Resps = append(o.Resps, resp{p.Status(), p.Close(), p.BodyOK(), p.BodyLen(), total - start})
		start = total
		p.Reset(head)
	}
	for _, c := range chunks {
		for len(c) > 0 {
			n, done, err := p.Parse(c)
			if err != nil {
				var e *Error
				if !errors.As(err, &e) {
					o.Err = "not *Error: " + err.Error()
				} else {
					o.Err = e.Reason
				}
				return o
			}
			if n < 0 || n > len(c) || (!done && n != len(c)) || (done && n == 0) {
				o.Err = fmt.Sprintf("contract: n=%d len=%d done=%v", n, len(c), done)
				return o
			}
			if !p.Started() {
				o.Err = "contract: not started after consuming bytes"
				return o
			}
			total += n
			c = c[n:]
			if done {
				finish()
			}
		}
	}
	wasStarted := p.Started()
	done, err := p.EOF()
	switch {
	case err != nil:
		o.Err = err.(*Error).Reason
		if err != ErrTruncated || !wasStarted {
			o.Err = "contract: EOF error " + o.Err
		}
	case done:
		finish()
	case wasStarted:
		o.Err = "contract: EOF on started response without result"
	}
	return o
}

type parseCase struct {
	name   string
	in     string
	head   bool
	expect string // expected body; checked when check is set
	check  bool
	want   []resp
	err    string
}

const ok2 = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

var parseCases = []parseCase{
	// Valid responses.
	{name: "cl", in: ok2, expect: "ok", check: true,
		want: []resp{{200, false, true, 2, len(ok2)}}},
	{name: "cl zero", in: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", expect: "", check: true,
		want: []resp{{200, false, true, 0, 38}}},
	{name: "cl body mismatch", in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno", expect: "ok", check: true,
		want: []resp{{200, false, false, 2, 40}}},
	{name: "cl body short", in: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\no", expect: "ok", check: true,
		want: []resp{{200, false, false, 1, 39}}},
	{name: "cl body long", in: "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nokk", expect: "ok", check: true,
		want: []resp{{200, false, false, 3, 41}}},
	{name: "cl body unchecked", in: "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc", expect: "ok",
		want: []resp{{200, false, true, 3, 41}}},
	{name: "cl case-insensitive name and ows", in: "HTTP/1.1 200 OK\r\ncontent-LENGTH: \t2 \r\n\r\nok", expect: "ok", check: true,
		want: []resp{{200, false, true, 2, 42}}},
	{name: "duplicate equal cl", in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok", expect: "ok", check: true,
		want: []resp{{200, false, true, 2, 59}}},
	{name: "cl list equal", in: "HTTP/1.1 200 OK\r\nContent-Length: 2 , 2,2\r\n\r\nok", expect: "ok", check: true,
		want: []resp{{200, false, true, 2, 46}}},
	{name: "no reason", in: "HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok", expect: "ok", check: true,
		want: []resp{{200, false, true, 2, 37}}},
	{name: "empty reason", in: "HTTP/1.1 200 \r\nContent-Length: 2\r\n\r\nok", expect: "ok", check: true,
		want: []resp{{200, false, true, 2, 38}}},
	{name: "bare lf", in: "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", expect: "ok", check: true,
		want: []resp{{200, false, true, 2, 37}}},
	{name: "similar names ignored", in: "HTTP/1.1 200 OK\r\nContent-Lengthy: x\r\nConnections: close\r\nTransfer-Encodin: gzip\r\nContent-Length: 2\r\n\r\nok",
		want: []resp{{200, false, true, 2, 104}}},
	{name: "chunked ext trailers", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;a=b\r\no\r\n1 ; x=\"y\"\r\nk\r\n0\r\nX-T: 1\r\nY: 2\r\n\r\n", expect: "ok", check: true,
		want: []resp{{200, false, true, 2, 90}}},
	{name: "chunked hex bare lf", in: "HTTP/1.1 200 OK\r\ntransfer-encoding:  CHUNKED \r\n\r\nA\nabcdefghij\nf\r\n0123456789abcde\r\n000\n\n",
		want: []resp{{200, false, true, 25, 87}}},
	{name: "chunked te list over headers", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: ,\r\nTransfer-Encoding: chunked,\r\n\r\n0\r\n\r\n",
		want: []resp{{200, false, true, 0, 75}}},
	{name: "close delimited", in: "HTTP/1.1 200 OK\r\nServer: x\r\n\r\nhello", expect: "hello", check: true,
		want: []resp{{200, true, true, 5, 35}}},
	{name: "close delimited empty", in: "HTTP/1.1 200 OK\r\n\r\n", expect: "", check: true,
		want: []resp{{200, true, true, 0, 19}}},
	{name: "head with cl", in: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", head: true, expect: "", check: true,
		want: []resp{{200, false, true, 0, 39}}},
	{name: "head with te and bad cl", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: x\r\n\r\n", head: true,
		want: []resp{{200, false, true, 0, 63}}},
	{name: "204 with cl", in: "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n",
		want: []resp{{204, false, true, 0, 46}}},
	{name: "304 with te", in: "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n",
		want: []resp{{304, false, true, 0, 57}}},
	{name: "100 continue then 200", in: "HTTP/1.1 100 Continue\r\n\r\n" + ok2, expect: "ok", check: true,
		want: []resp{{200, false, true, 2, 25 + len(ok2)}}},
	{name: "103 then 200", in: "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\nConnection: close\r\nContent-Length: 9\r\n\r\n" + ok2, expect: "ok", check: true,
		want: []resp{{200, false, true, 2, 95 + len(ok2)}}},
	{name: "102 103 then 200", in: "HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 103\r\n\r\n" + ok2,
		want: []resp{{200, false, true, 2, 27 + 16 + len(ok2)}}},
	{name: "pipelined two", in: ok2 + "HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nnot", expect: "ok", check: true,
		want: []resp{{200, false, true, 2, len(ok2)}, {404, false, false, 3, 48}}},
	{name: "pipelined chunked then cl", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n" + ok2, expect: "ok", check: true,
		want: []resp{{200, false, true, 2, 59}, {200, false, true, 2, len(ok2)}}},
	{name: "http10", in: "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
		want: []resp{{200, true, true, 2, 40}}},
	{name: "http10 keep-alive", in: "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok",
		want: []resp{{200, false, true, 2, 64}}},
	{name: "http10 keep-alive chunked", in: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		want: []resp{{200, true, true, 0, 76}}},
	{name: "connection close", in: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
		want: []resp{{200, true, true, 2, 59}}},
	{name: "connection close in list", in: "HTTP/1.1 200 OK\r\nConnection: keep-alive ,, CLOSE \r\nContent-Length: 2\r\n\r\nok",
		want: []resp{{200, true, true, 2, 74}}},
	{name: "connection not close", in: "HTTP/1.1 200 OK\r\nConnection: closed, clo se, upgrade\r\nContent-Length: 2\r\n\r\nok",
		want: []resp{{200, false, true, 2, 77}}},
	{name: "empty stream"},
	{name: "obs fold continuing x header", in: "HTTP/1.1 200 OK\r\nX-Foo: a\r\n  b\r\nContent-Length: 2\r\n\r\nok", expect: "ok", check: true,
		want: []resp{{200, false, true, 2, 55}}},
	{name: "obs fold tab and several lines", in: "HTTP/1.1 200 OK\r\nX-Foo: a\r\n\tb\r\n c\r\n \t d e \r\nContent-Length: 2\r\n\r\nok", expect: "ok", check: true,
		want: []resp{{200, false, true, 2, 67}}},
	{name: "obs fold whitespace only line", in: "HTTP/1.1 200 OK\r\nX-Foo: a\r\n \r\nContent-Length: 2\r\n\r\nok", expect: "ok", check: true,
		want: []resp{{200, false, true, 2, 53}}},
	{name: "obs fold empty value then fold", in: "HTTP/1.1 200 OK\r\nX-Foo:\r\n b\r\nContent-Length: 2\r\n\r\nok", expect: "ok", check: true,
		want: []resp{{200, false, true, 2, 52}}},
	{name: "obs fold bare lf", in: "HTTP/1.1 200 OK\nX-Foo: a\n b\nContent-Length: 2\n\nok", expect: "ok", check: true,
		want: []resp{{200, false, true, 2, 49}}},
	{name: "obs fold looks like framing", in: "HTTP/1.1 200 OK\r\nX-Foo: a\r\n Content-Length: 9\r\nContent-Length: 2\r\n\r\nok", expect: "ok", check: true,
		want: []resp{{200, false, true, 2, 70}}},
	{name: "obs fold looks like connection close", in: "HTTP/1.1 200 OK\r\nX-Foo: a\r\n Connection: close\r\nContent-Length: 2\r\n\r\nok", expect: "ok", check: true,
		want: []resp{{200, false, true, 2, 70}}},
	{name: "obs fold after cl line continues the next field", in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX: a\r\n b\r\n\r\nok", expect: "ok", check: true,
		want: []resp{{200, false, true, 2, 50}}},
	{name: "obs fold with connection close elsewhere", in: "HTTP/1.1 200 OK\r\nConnection: close\r\nServer: x\r\n y\r\nContent-Length: 2\r\n\r\nok", expect: "ok", check: true,
		want: []resp{{200, true, true, 2, 74}}},
	{name: "obs fold in 1xx", in: "HTTP/1.1 103 Early\r\nLink: a\r\n b\r\n\r\n" + ok2, expect: "ok", check: true,
		want: []resp{{200, false, true, 2, 75}}},
	{name: "obs fold in trailer", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nA: b\r\n c\r\nContent-Length: 9\r\n 9\r\n\r\n", expect: "ok", check: true,
		want: []resp{{200, false, true, 2, 92}}},
	{name: "obs fold pipelined", in: "HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\nContent-Length: 2\r\n\r\nok" + "HTTP/1.1 200 OK\r\nX-A: a\r\n\tb\r\nContent-Length: 2\r\n\r\nok", expect: "ok", check: true,
		want: []resp{{200, false, true, 2, 52}, {200, false, true, 2, 52}}},
	{name: "obs-text in value and reason", in: "HTTP/1.1 200 \xc3\xa9\r\nX: \xff\tv\r\nContent-Length: 0\r\n\r\n",
		want: []resp{{200, false, true, 0, 46}}},

	// Protocol faults.
	{name: "bad version", in: "HTTP/2 200 OK\r\n\r\n", err: "bad_status_line"},
	{name: "lowercase version", in: "http/1.1 200 OK\r\n\r\n", err: "bad_status_line"},
	{name: "two digit status", in: "HTTP/1.1 20 OK\r\n\r\n", err: "bad_status_line"},
	{name: "four digit status", in: "HTTP/1.1 2000 OK\r\n\r\n", err: "bad_status_line"},
	{name: "status below 100", in: "HTTP/1.1 099 X\r\n\r\n", err: "bad_status_line"},
	{name: "bare cr in status line", in: "HTTP/1.1 200 O\rK\r\n\r\n", err: "bad_status_line"},
	{name: "ctl in reason", in: "HTTP/1.1 200 O\x00K\r\n\r\n", err: "bad_status_line"},
	{name: "garbage", in: "<html>", err: "bad_status_line"},
	{name: "unexpected 101", in: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", err: "unexpected_101"},
	{name: "space before colon", in: "HTTP/1.1 200 OK\r\nFoo : bar\r\n\r\n", err: "bad_header"},
	{name: "no colon", in: "HTTP/1.1 200 OK\r\nFoo\r\n\r\n", err: "bad_header"},
	{name: "empty name", in: "HTTP/1.1 200 OK\r\n: bar\r\n\r\n", err: "bad_header"},
	{name: "bare cr in value", in: "HTTP/1.1 200 OK\r\nFoo: b\rar\r\n\r\n", err: "bad_header"},
	{name: "bare cr at end", in: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\rx", err: "bad_header"},
	{name: "nul in value", in: "HTTP/1.1 200 OK\r\nFoo: b\x00r\r\n\r\n", err: "bad_header"},
	{name: "bad trailer", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX\r\n\r\n", err: "bad_header"},
	{name: "obs fold before first field", in: "HTTP/1.1 200 OK\r\n X: a\r\nContent-Length: 2\r\n\r\nok", err: "obs_fold"},
	{name: "obs fold tab before first field", in: "HTTP/1.1 200 OK\r\n\tX: a\r\n\r\n", err: "obs_fold"},
	{name: "obs fold before first field bare lf", in: "HTTP/1.1 200 OK\n X: a\n\n", err: "obs_fold"},
	{name: "obs fold before first field of final after 1xx", in: "HTTP/1.1 103 Early\r\nLink: a\r\n\r\nHTTP/1.1 200 OK\r\n b\r\n\r\n", err: "obs_fold"},
	{name: "obs fold continuing cl", in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n 2\r\n\r\nok", err: "obs_fold"},
	{name: "obs fold continuing cl lowercase split name", in: "HTTP/1.1 200 OK\r\ncontent-length:2\r\n\t\r\n\r\nok", err: "obs_fold"},
	{name: "obs fold continuing te", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip,\r\n chunked\r\n\r\n0\r\n\r\n", err: "obs_fold"},
	{name: "obs fold continuing te after x fold", in: "HTTP/1.1 200 OK\r\nX: a\r\n b\r\nTransfer-Encoding: chunked\r\n c\r\n\r\n", err: "obs_fold"},
	{name: "obs fold continuing connection", in: "HTTP/1.1 200 OK\r\nConnection: keep-alive,\r\n close\r\nContent-Length: 2\r\n\r\nok", err: "obs_fold"},
	{name: "obs fold continuing cl of 204", in: "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n 5\r\n\r\n", err: "obs_fold"},
	{name: "obs fold continuing cl of head", in: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n 5\r\n\r\n", head: true, err: "obs_fold"},
	{name: "obs fold continuing te of 304", in: "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n x\r\n\r\n", err: "obs_fold"},
	{name: "obs fold before first trailer", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n c\r\n\r\n", err: "obs_fold"},
	{name: "obs fold line with ctl", in: "HTTP/1.1 200 OK\r\nX: a\r\n b\x00\r\n\r\n", err: "bad_header"},
	{name: "obs fold line bare cr", in: "HTTP/1.1 200 OK\r\nX: a\r\n b\rc\r\n\r\n", err: "bad_header"},
	{name: "conflicting cl", in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", err: "conflicting_content_length"},
	{name: "conflicting cl list", in: "HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\nok", err: "conflicting_content_length"},
	{name: "cl with te", in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n", err: "content_length_with_transfer_encoding"},
	{name: "te with cl", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 2\r\n\r\n", err: "content_length_with_transfer_encoding"},
	{name: "cl letters", in: "HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n", err: "bad_content_length"},
	{name: "cl negative", in: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", err: "bad_content_length"},
	{name: "cl plus", in: "HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\n", err: "bad_content_length"},
	{name: "cl inner space", in: "HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n\r\n", err: "bad_content_length"},
	{name: "cl empty", in: "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n", err: "bad_content_length"},
	{name: "cl empty element", in: "HTTP/1.1 200 OK\r\nContent-Length: 1,,1\r\n\r\n", err: "bad_content_length"},
	{name: "cl 19 digits", in: "HTTP/1.1 200 OK\r\nContent-Length: 1234567890123456789\r\n\r\n", err: "bad_content_length"},
	{name: "chunk size not hex", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", err: "bad_chunk_size"},
	{name: "chunk size empty", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n", err: "bad_chunk_size"},
	{name: "chunk size negative", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n", err: "bad_chunk_size"},
	{name: "chunk size 16 digits", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0000000000000001\r\nx\r\n0\r\n\r\n", err: "bad_chunk_size"},
	{name: "chunk size bare cr", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\rx\r\n", err: "bad_chunk_size"},
	{name: "chunk size junk after ws", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1 x\r\n", err: "bad_chunk_size"},
	{name: "chunk data no crlf", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nokk\r\n", err: "bad_chunk"},
	{name: "chunk data cr no lf", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\no\rx", err: "bad_chunk"},
	{name: "te gzip chunked", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", err: "unsupported_transfer_encoding"},
	{name: "te identity", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\n", err: "unsupported_transfer_encoding"},
	{name: "te chunked twice", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", err: "unsupported_transfer_encoding"},
	{name: "te chunked param", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked;q=1\r\n\r\n", err: "unsupported_transfer_encoding"},
	{name: "te empty", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: \r\n\r\n", err: "unsupported_transfer_encoding"},
	{name: "truncated status line", in: "HTTP/1.1 20", err: "truncated"},
	{name: "truncated headers", in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n", err: "truncated"},
	{name: "truncated cl body", in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\no", err: "truncated"},
	{name: "truncated chunked", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n", err: "truncated"},
	{name: "truncated trailers", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: y\r\n", err: "truncated"},
	{name: "truncated after 100", in: "HTTP/1.1 100 Continue\r\n\r\n", err: "truncated"},
	{name: "truncated second pipelined", in: ok2 + "HTTP/1.1 200 OK\r\n", want: []resp{{200, false, true, 2, len(ok2)}}, err: "truncated"},
}

// bigCases are generated cases too large for the exhaustive split test.
func bigCases() []parseCase {
	status := "HTTP/1.1 200 OK\r\n"
	interim := "HTTP/1.1 103 Early\r\n"
	// fieldLine returns a field line of exactly n bytes.
	fieldLine := func(n int) string { return "X: " + strings.Repeat("v", n-5) + "\r\n" }
	exact := status + fieldLine(maxHeadBlock-len(status)-2) + "\r\n"
	over := status + fieldLine(maxHeadBlock-len(status)-1) + "\r\n"
	ext := strings.Repeat("e", maxChunkExt)
	te := status + "Transfer-Encoding: chunked\r\n\r\n0"
	trailerExact := te + "\r\n" + fieldLine(maxHeadBlock-2) + "\r\n"
	trailerOver := te + "\r\n" + fieldLine(maxHeadBlock-1) + "\r\n"
	return []parseCase{
		{name: "head block at limit", in: exact, want: []resp{{200, true, true, 0, len(exact)}}},
		{name: "head block over limit", in: over, err: "header_too_large"},
		{name: "head block over limit then garbage", in: status + strings.Repeat("x", maxHeadBlock) + "\x00", err: "header_too_large"},
		{name: "interim blocks counted separately", in: interim + fieldLine(maxHeadBlock-len(interim)-2) + "\r\n" + exact,
			want: []resp{{200, true, true, 0, 2 * maxHeadBlock}}},
		{name: "chunk ext at limit", in: te[:len(te)-1] + "1;" + ext + "\r\nx\r\n0\r\n\r\n",
			want: []resp{{200, false, true, 1, len(te) - 1 + 2 + maxChunkExt + 2 + 3 + 5}}},
		{name: "chunk ext over limit", in: te[:len(te)-1] + "1;" + ext + "e\r\nx\r\n0\r\n\r\n", err: "bad_chunk_size"},
		{name: "trailers at limit", in: trailerExact, want: []resp{{200, false, true, 0, len(trailerExact)}}},
		{name: "trailers over limit", in: trailerOver, err: "header_too_large"},
	}
}

func TestBigCaseSizes(t *testing.T) {
	c := bigCases()
	if got := len(c[0].in); got != maxHeadBlock {
		t.Fatalf("exact case has %d bytes", got)
	}
}

func checkCase(t *testing.T, c parseCase, allSplits bool) {
	t.Helper()
	in := []byte(c.in)
	want := outcome{Resps: c.want, Err: c.err}
	whole := parseStream([][]byte{in}, c.head, []byte(c.expect), c.check)
	if !reflect.DeepEqual(whole, want) {
		t.Fatalf("whole: got %v, want %v", whole, want)
	}
	bytewise := make([][]byte, len(in))
	for i := range in {
		bytewise[i] = in[i : i+1]
	}
	if got := parseStream(bytewise, c.head, []byte(c.expect), c.check); !reflect.DeepEqual(got, want) {
		t.Fatalf("byte by byte: got %v, want %v", got, want)
	}
	step := 1
	if !allSplits {
		step = len(in)/97 + 1
	}
	for k := 0; k <= len(in); k += step {
		if got := parseStream([][]byte{in[:k], in[k:]}, c.head, []byte(c.expect), c.check); !reflect.DeepEqual(got, want) {
			t.Fatalf("split at %d: got %v, want %v", k, got, want)
		}
	}
}

func TestParse(t *testing.T) {
	for _, c := range parseCases {
		t.Run(c.name, func(t *testing.T) { checkCase(t, c, true) })
	}
}

func TestParseBig(t *testing.T) {
	for _, c := range bigCases() {
		t.Run(c.name, func(t *testing.T) { checkCase(t, c, false) })
	}
}

func TestParseAPI(t *testing.T) {
	var p Parser
	if done, err := p.EOF(); done || err != nil {
		t.Fatalf("EOF on fresh parser: %v %v", done, err)
	}
	if p.Started() {
		t.Fatal("fresh parser started")
	}
	if n, done, err := p.Parse(nil); n != 0 || done || err != nil || p.Started() {
		t.Fatalf("Parse(nil): %d %v %v", n, done, err)
	}
	n, done, err := p.Parse([]byte(ok2 + "HTTP"))
	if n != len(ok2) || !done || err != nil {
		t.Fatalf("Parse: %d %v %v", n, done, err)
	}
	if n, done, err := p.Parse([]byte("x")); n != 0 || !done || err != nil {
		t.Fatalf("Parse after done: %d %v %v", n, done, err)
	}
	p.Reset(false)
	if _, _, err := p.Parse([]byte("x")); err != ErrBadStatusLine {
		t.Fatalf("got %v", err)
	}
	if _, _, err := p.Parse([]byte("HTTP/1.1 200 OK\r\n")); err != ErrBadStatusLine {
		t.Fatalf("error not sticky: %v", err)
	}
	if _, err := p.EOF(); err != ErrBadStatusLine {
		t.Fatalf("EOF after error: %v", err)
	}
	if got := ErrTruncated.Error(); got != "h1: truncated" {
		t.Fatalf("Error() = %q", got)
	}
}

func TestParseZeroAllocs(t *testing.T) {
	in := []byte(smallResp)
	chunked := []byte(chunkedResp)
	var p Parser
	p.SetExpectBody([]byte("ok"), true)
	allocs := testing.AllocsPerRun(1000, func() {
		p.Reset(false)
		if _, done, err := p.Parse(in); !done || err != nil || !p.BodyOK() {
			t.Fatal("parse failed")
		}
		p.Reset(false)
		for i := range chunked {
			p.Parse(chunked[i : i+1])
		}
		if p.state != sDone {
			t.Fatal("chunked parse failed")
		}
	})
	if allocs != 0 {
		t.Fatalf("got %v allocs per response", allocs)
	}
}

// A body that fails its check keeps its first bytes, however it was split
// and framed; a body that passes keeps none.
func TestParserSampleOfAFailedBody(t *testing.T) {
	long := strings.Repeat("z", 2*SampleMax)
	for _, c := range []struct{ in, expect, want string }{
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno", "ok", "no"},
		{"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\no", "ok", "o"},
		{"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nokk", "ok", "okk"},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n2\r\nxy\r\n0\r\n\r\n", "okay", "okxy"},
		{"HTTP/1.1 200 OK\r\nContent-Length: 128\r\n\r\n" + long, "ok", long[:SampleMax]},
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "ok", ""},
	} {
		for split := 1; split <= len(c.in); split++ {
			var p Parser
			p.SetExpectBody([]byte(c.expect), true)
			p.Reset(false)
			in := []byte(c.in)
			done := false
			for len(in) > 0 && !done {
				k := min(split, len(in))
				n, d, err := p.Parse(in[:k])
				if err != nil {
					t.Fatal(err)
				}
				in, done = in[n:], d
			}
			if !done || string(p.Sample()) != c.want {
				t.Fatalf("%q split %d: done %v sample %q, want %q", c.in, split, done, p.Sample(), c.want)
			}
		}
	}
}
