package h2

import (
	"testing"

	"golang.org/x/net/http2"

	"github.com/brk-bench/brk/internal/exchange"
)

func http2HeadersParam(id uint32) http2.HeadersFrameParam {
	return http2.HeadersFrameParam{StreamID: id, BlockFragment: block200CL, EndHeaders: true}
}

// BenchmarkSessionCycle: one request/response pair per iteration on a
// connection holding depth streams: the request's HEADERS are copied
// from the template, the response (static-table :status, content-length
// without indexing, a 2-byte DATA) is parsed in place. 0 allocs/op.
func BenchmarkSessionCycle(b *testing.B) {
	for _, depth := range []int{1, 100} {
		b.Run(map[int]string{1: "depth1", 100: "depth100"}[depth], func(b *testing.B) {
			tm := testTemplate(b, nil)
			s := open(b, tm, depth)
			f := newFrames()
			f.fr.WriteHeaders(http2HeadersParam(1))
			f.fr.WriteData(1, true, []byte("ok"))
			resp := append([]byte(nil), f.Bytes()...)
			hl := 9 + len(block200CL)
			setID := func(id uint32) {
				for _, off := range []int{5, hl + 5} {
					resp[off], resp[off+1], resp[off+2], resp[off+3] = byte(id>>24), byte(id>>16), byte(id>>8), byte(id)
				}
			}
			done := make([]exchange.Completion, 0, 16)
			next, tok := uint32(1), uint32(depth)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				setID(next)
				next += 2
				in := resp
				for len(in) > 0 {
					n, comps, err := s.Parse(in, done[:0])
					if err != nil {
						b.Fatal(err)
					}
					in = in[n:]
					if len(comps) > 0 && comps[0].Status != 200 {
						b.Fatal(comps)
					}
				}
				s.Queue(tok, 0, false)
				tok++
				if n, _ := s.Wrote(len(s.Output())); n != 1 {
					b.Fatal("request not written")
				}
			}
		})
	}
}
