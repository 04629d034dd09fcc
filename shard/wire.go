package shard

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/brk-bench/brk/sched"
)

// The wire protocol: one TCP connection per shard to the coordinator
// (shard 0), carrying frames of a 4-byte big-endian length and that many
// bytes of one JSON message. A reader refuses a frame longer than
// maxFrame before reading it.
//
//	coordinator → shard  challenge {nonce}
//	shard → coordinator  hello     {index, count, plan, start_at_ms, nonce, mac}
//	coordinator → shard  welcome   {mac} | refused {reason}
//	coordinator → shard  start     {start_at_ms}            once every shard joined
//	shard → coordinator  report    {phase, depth, lateness_ns, measurement}
//	coordinator → shard  result    {phase, measurement (merged), stop, verdict, reason}
//	coordinator → shard  stop      {reason}                 the run ends inconclusive
//	shard → coordinator  abort     {reason}                 this shard cannot go on
//
// The shared token (BRK_TOKEN) never crosses the wire: hello carries
// HMAC-SHA256(token, both nonces and the shard's claims), welcome an HMAC
// over both nonces the other way, so each side proves it holds the token
// and a replayed hello is useless. The messages after the handshake are
// not authenticated or encrypted: run the shards on a network you trust
// (a cluster's pod network).
const maxFrame = 4 << 20

// Message types.
const (
	msgChallenge = "challenge"
	msgHello     = "hello"
	msgWelcome   = "welcome"
	msgRefused   = "refused"
	msgStart     = "start"
	msgReport    = "report"
	msgResult    = "result"
	msgStop      = "stop"
	msgAbort     = "abort"
)

// message is every frame's JSON body; Type says which fields matter.
type message struct {
	Type      string             `json:"type"`
	Nonce     string             `json:"nonce,omitempty"`
	MAC       string             `json:"mac,omitempty"`
	Index     int                `json:"index"`
	Count     int                `json:"count,omitempty"`
	Plan      string             `json:"plan,omitempty"`
	StartAtMs int64              `json:"start_at_ms,omitempty"`
	Phase     int                `json:"phase"`
	Depth     int                `json:"depth,omitempty"`
	Lateness  int64              `json:"lateness_ns,omitempty"`
	M         *sched.Measurement `json:"measurement,omitempty"`
	Stop      bool               `json:"stop,omitempty"`
	Verdict   int                `json:"verdict,omitempty"`
	Reason    string             `json:"reason,omitempty"`
}

func writeFrame(c net.Conn, m *message, timeout time.Duration) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(b) > maxFrame {
		return fmt.Errorf("shard: %s message of %d bytes is over the %d-byte frame limit", m.Type, len(b), maxFrame)
	}
	buf := make([]byte, 4+len(b))
	binary.BigEndian.PutUint32(buf, uint32(len(b)))
	copy(buf[4:], b)
	if timeout > 0 {
		c.SetWriteDeadline(time.Now().Add(timeout))
		defer c.SetWriteDeadline(time.Time{})
	}
	_, err = c.Write(buf)
	return err
}

// readFrame reads one frame; it refuses one over limit bytes before
// reading (or allocating) its body.
func readFrame(r io.Reader, limit uint32) (*message, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > limit {
		return nil, fmt.Errorf("frame of %d bytes is over the %d-byte limit", n, limit)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	m := &message{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("bad frame: %v", err)
	}
	return m, nil
}

func nonce() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// mac is HMAC-SHA256(token, label and fields separated by NUL), in hex.
func mac(token, label string, fields ...string) string {
	h := hmac.New(sha256.New, []byte(token))
	h.Write([]byte(label))
	for _, f := range fields {
		h.Write([]byte{0})
		h.Write([]byte(f))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func helloMAC(token, cnonce string, m *message) string {
	return mac(token, "brk-shard-hello-1", cnonce, m.Nonce, strconv.Itoa(m.Index), strconv.Itoa(m.Count),
		m.Plan, strconv.FormatInt(m.StartAtMs, 10))
}

func welcomeMAC(token, cnonce, snonce string) string {
	return mac(token, "brk-shard-welcome-1", snonce, cnonce)
}

func macOK(got, want string) bool { return hmac.Equal([]byte(got), []byte(want)) }
