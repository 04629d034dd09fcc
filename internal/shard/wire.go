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

	"github.com/brk-bench/brk/internal/judge"
)

// The wire protocol: one TCP connection per shard to the coordinator
// (shard 0), carrying frames of a 4-byte big-endian length and that many
// bytes: one JSON message (the handshake: challenge, hello, refused) or
// one sealed message (from the welcome on, below). A reader refuses a
// frame longer than maxFrame before reading it.
//
//	coordinator → shard  challenge {nonce}
//	shard → coordinator  hello     {index, count, plan, start_at_ms, challenge, nonce, mac}
//	coordinator → shard  welcome   {mac} (sealed) | refused {reason} (plain)
//	coordinator → shard  start     {start_at_ms}            once every shard joined
//	shard → coordinator  report    {phase, depth, lateness_ns, measurement}
//	coordinator → shard  result    {phase, measurement (merged), stop, verdict, reason}
//	coordinator → shard  stop      {reason}                 the run ends inconclusive
//	shard → coordinator  abort     {reason}                 this shard cannot go on
//
// The shared token (BRK_TOKEN) never crosses the wire: hello carries
// HMAC-SHA256(token, both nonces and the shard's claims), welcome an HMAC
// over both nonces the other way, so each side proves it holds the token
// and a replayed hello is useless. The hello names the challenge it
// answers (its MAC covers it either way), so that a hello replayed from
// another connection is refused as a replay, not as a token that differs.
//
// From the welcome on, every frame is sealed: its body is an 8-byte
// big-endian sequence number, the JSON message and HMAC-SHA256 over both
// under a key of the connection and direction, itself HMAC-SHA256(token,
// label, the coordinator's nonce, the shard's nonce, the direction). Each
// direction counts its frames from 0; a reader refuses a frame whose MAC
// fails (a flipped byte, a frame forged or taken from another connection)
// and one whose number is not the next (replayed, reordered, dropped), and
// the run ends inconclusive naming the shard. Frames are authenticated,
// not encrypted: the measurements are no secret, the verdict cannot be
// forged.
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
	Challenge string             `json:"challenge,omitempty"` // hello: the challenge's nonce it answers
	Nonce     string             `json:"nonce,omitempty"`
	MAC       string             `json:"mac,omitempty"`
	Index     int                `json:"index"`
	Count     int                `json:"count,omitempty"`
	Plan      string             `json:"plan,omitempty"`
	StartAtMs int64              `json:"start_at_ms,omitempty"`
	Phase     int                `json:"phase"`
	Depth     int                `json:"depth,omitempty"`
	Lateness  int64              `json:"lateness_ns,omitempty"`
	M         *judge.Measurement `json:"measurement,omitempty"`
	Stop      bool               `json:"stop,omitempty"`
	Verdict   judge.Verdict      `json:"verdict,omitempty"`
	Reason    string             `json:"reason,omitempty"`
}

func writeFrame(c net.Conn, m *message, timeout time.Duration) error {
	return writeSealed(c, nil, m, timeout)
}

// writeSealed writes m, sealed by s (nil: a handshake frame, plain JSON).
func writeSealed(c net.Conn, s *sealer, m *message, timeout time.Duration) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(b) > maxFrame-sealOverhead {
		return fmt.Errorf("shard: %s message of %d bytes is over the %d-byte frame limit", m.Type, len(b), maxFrame-sealOverhead)
	}
	if s != nil {
		b = s.seal(b)
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
	b, err := readRaw(r, limit)
	if err != nil {
		return nil, err
	}
	return decode(b)
}

// readSealed reads one sealed frame and opens it with o.
func readSealed(r io.Reader, o *opener, limit uint32) (*message, error) {
	b, err := readRaw(r, limit)
	if err != nil {
		return nil, err
	}
	if b, err = o.open(b); err != nil {
		return nil, err
	}
	return decode(b)
}

func readRaw(r io.Reader, limit uint32) ([]byte, error) {
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
	return b, nil
}

func decode(b []byte) (*message, error) {
	m := &message{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("bad frame: %v", err)
	}
	return m, nil
}

// sealOverhead is a sealed frame's sequence number and MAC.
const sealOverhead = 8 + sha256.Size

// FrameError is a sealed frame refused: its MAC failed or its number is
// not the next. The run ends inconclusive, naming the shard.
type FrameError struct{ Msg string }

func (e *FrameError) Error() string { return e.Msg }

// Directions of a connection's keys.
const (
	toShard       = "coordinator-to-shard"
	toCoordinator = "shard-to-coordinator"
)

// sessionKey is the key of one direction of a connection: the token, the
// coordinator's challenge nonce and the shard's hello nonce.
func sessionKey(token, cnonce, snonce, dir string) []byte {
	h := hmac.New(sha256.New, []byte(token))
	for i, f := range []string{"brk-shard-session-1", cnonce, snonce, dir} {
		if i > 0 {
			h.Write([]byte{0})
		}
		h.Write([]byte(f))
	}
	return h.Sum(nil)
}

// sealer numbers and authenticates one direction's frames.
type sealer struct {
	key []byte
	seq uint64
}

func (s *sealer) seal(body []byte) []byte {
	out := make([]byte, 8, 8+len(body)+sha256.Size)
	binary.BigEndian.PutUint64(out, s.seq)
	s.seq++
	out = append(out, body...)
	h := hmac.New(sha256.New, s.key)
	h.Write(out)
	return h.Sum(out)
}

// opener checks one direction's frames: the MAC, then the number.
type opener struct {
	key  []byte
	seq  uint64
	from string // "shard 2", "the coordinator": named in errors
}

func (o *opener) open(b []byte) ([]byte, error) {
	if len(b) < sealOverhead {
		return nil, &FrameError{fmt.Sprintf("a frame from %s of %d bytes is too short to be authenticated", o.from, len(b))}
	}
	body, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	h := hmac.New(sha256.New, o.key)
	h.Write(body)
	if !hmac.Equal(h.Sum(nil), sum) {
		return nil, &FrameError{fmt.Sprintf("frame %d from %s failed authentication (HMAC-SHA256): altered or forged", o.seq, o.from)}
	}
	if seq := binary.BigEndian.Uint64(body); seq != o.seq {
		return nil, &FrameError{fmt.Sprintf("a frame from %s is out of sequence (number %d, expected %d): replayed or reordered", o.from, seq, o.seq)}
	}
	o.seq++
	return body[8:], nil
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
