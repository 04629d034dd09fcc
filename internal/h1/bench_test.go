package h1

import (
	"strings"
	"testing"
)

// smallResp is an nginx-like small response.
const smallResp = "HTTP/1.1 200 OK\r\n" +
	"Server: nginx/1.24.0\r\n" +
	"Date: Sat, 29 Nov 2025 15:58:00 GMT\r\n" +
	"Content-Type: text/plain\r\n" +
	"Content-Length: 2\r\n" +
	"Connection: keep-alive\r\n" +
	"\r\n" +
	"ok"

// chunkedResp is a small chunked response with the body "ok".
const chunkedResp = "HTTP/1.1 200 OK\r\n" +
	"Server: nginx/1.24.0\r\n" +
	"Date: Sat, 29 Nov 2025 15:58:00 GMT\r\n" +
	"Content-Type: text/plain\r\n" +
	"Transfer-Encoding: chunked\r\n" +
	"Connection: keep-alive\r\n" +
	"\r\n" +
	"1\r\no\r\n1\r\nk\r\n0\r\n\r\n"

func benchParse(b *testing.B, in []byte, perBuf int) {
	var p Parser
	p.SetExpectBody([]byte("ok"), true)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		buf := in
		for k := 0; k < perBuf; k++ {
			p.Reset(false)
			n, done, err := p.Parse(buf)
			if !done || err != nil || !p.BodyOK() || p.Status() != 200 {
				b.Fatalf("parse: done=%v err=%v", done, err)
			}
			buf = buf[n:]
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*perBuf), "ns/resp")
}

func BenchmarkParseSmall(b *testing.B) { benchParse(b, []byte(smallResp), 1) }

func BenchmarkParseChunked(b *testing.B) { benchParse(b, []byte(chunkedResp), 1) }

func BenchmarkParsePipelined16(b *testing.B) {
	benchParse(b, []byte(strings.Repeat(smallResp, 16)), 16)
}
