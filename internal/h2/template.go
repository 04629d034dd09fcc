package h2

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/brk-bench/brk/internal/exchange"
)

// Settings this client advertises in its preface.
const (
	// streamWindow is every stream's receive window (SETTINGS_INITIAL_WINDOW_SIZE).
	streamWindow = 16 << 20
	// connWindow is the connection's receive window, raised from 65535
	// by a WINDOW_UPDATE right after the preface.
	connWindow = 1 << 30
	// maxFrame is the largest frame accepted (the default
	// SETTINGS_MAX_FRAME_SIZE, not raised).
	maxFrame = 16384
	// maxHeaderBlock bounds one response's header block (HEADERS plus
	// CONTINUATIONs, as sent, compressed): a CONTINUATION flood is a
	// protocol fault, not memory growth.
	maxHeaderBlock = 64 << 10
	// maxStreamID is the highest stream id; a connection whose ids run
	// out is replaced.
	maxStreamID = 1<<31 - 1
)

// Template is a target's requests encoded once for HTTP/2 and shared
// read-only by every Session of a run: the connection preface, and the
// request's header block in its two forms — the first on a connection,
// which starts with a dynamic table size update to 0, and every later
// one, which is the same bytes each time (static-table indices and
// literals, no dynamic-table references).
type Template struct {
	preface []byte // client preface + SETTINGS + connection WINDOW_UPDATE
	first   []byte // header block of a connection's first request
	block   []byte // header block of every later request
	body    []byte // nil: no body (END_STREAM on HEADERS)
	head    bool
	expect  []byte
	check   bool

	// FirstStreamID, when non-zero, is the first stream id of every
	// connection (odd). Tests set it near 2^31−1 to exercise the
	// replacement of a connection whose ids run out.
	FirstStreamID uint32
}

// NewTemplate encodes req (validated as for HTTP/1.1) for HTTP/2 with
// scheme "http" or "https". expect/check set the exact body every
// response must carry.
func NewTemplate(req exchange.Request, scheme string, expect []byte, check bool) (*Template, error) {
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("h2: %w", err)
	}
	method, path, authority := req.EffectiveMethod(), req.EffectiveTarget(), req.Authority()
	for _, h := range req.Headers {
		switch strings.ToLower(h.Name) {
		case "keep-alive", "proxy-connection", "upgrade", "te":
			return nil, errors.New("h2: header " + strconv.Quote(h.Name) + " is connection-specific and not allowed in HTTP/2")
		}
	}
	fields := []hpack.HeaderField{
		{Name: ":method", Value: method},
		{Name: ":scheme", Value: scheme},
		{Name: ":authority", Value: authority},
		{Name: ":path", Value: path},
	}
	if !req.HasHeader("user-agent") {
		fields = append(fields, hpack.HeaderField{Name: "user-agent", Value: "brk"})
	}
	for _, h := range req.Headers {
		if strings.EqualFold(h.Name, "host") {
			continue
		}
		fields = append(fields, hpack.HeaderField{Name: strings.ToLower(h.Name), Value: exchange.TrimOWS(h.Value)})
	}
	if req.Body != nil {
		if !req.HasHeader("content-type") {
			fields = append(fields, hpack.HeaderField{Name: "content-type", Value: "application/octet-stream"})
		}
		fields = append(fields, hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(len(req.Body))})
	}
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	enc.SetMaxDynamicTableSizeLimit(0)
	encode := func() []byte {
		buf.Reset()
		for _, f := range fields {
			if err := enc.WriteField(f); err != nil {
				panic(err) // bytes.Buffer does not fail
			}
		}
		return bytes.Clone(buf.Bytes())
	}
	t := &Template{first: encode(), block: encode(), head: method == "HEAD", expect: expect, check: check}
	if len(req.Body) > 0 {
		t.body = req.Body
	}
	if len(t.first) == 0 || t.first[0] != 0x20 {
		return nil, errors.New("h2: header block does not start with a table size update")
	}
	if len(t.first) > maxHeaderBlock {
		return nil, errors.New("h2: request header block over 64 KiB")
	}
	// Preface: the magic, SETTINGS (no push, large stream windows), and
	// the connection window raised.
	var pre bytes.Buffer
	pre.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&pre, nil)
	if err := fr.WriteSettings(
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: streamWindow},
		http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: 1 << 20},
	); err != nil {
		return nil, err
	}
	if err := fr.WriteWindowUpdate(0, connWindow-65535); err != nil {
		return nil, err
	}
	t.preface = pre.Bytes()
	return t, nil
}
