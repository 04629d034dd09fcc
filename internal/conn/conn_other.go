//go:build !(linux || darwin || dragonfly || freebsd)

package conn

import (
	"crypto/tls"
	"errors"
	"runtime"
	"time"

	"github.com/brk-bench/brk/internal/exchange"
)

// This file lets brk compile on platforms it does not support (Windows,
// OpenBSD, ...): every call reports ErrUnsupported. The command refuses to
// run there before any of it is reached.

// ErrUnsupported is returned by every operation on an unsupported platform.
var ErrUnsupported = errors.New("conn: " + runtime.GOOS + " is not supported (Linux, macOS, FreeBSD, DragonFly)")

// Dialer is unavailable on this platform.
type Dialer struct{ addr Addr }

// NewDialer returns a Dialer whose Dial reports ErrUnsupported.
func NewDialer(a Addr) *Dialer { return &Dialer{addr: a} }

// Addr returns the dialed address.
func (d *Dialer) Addr() Addr { return d.addr }

// Dial reports ErrUnsupported.
func (d *Dialer) Dial() (fd int, err error) { return -1, ErrUnsupported }

// Finish reports ErrUnsupported.
func Finish(fd int) error { return ErrUnsupported }

// Shutdown does nothing.
func Shutdown(fd int) {}

// Close does nothing.
func Close(fd int) {}

// Plain is unavailable on this platform.
type Plain struct{}

// Open does nothing.
func (p *Plain) Open(fd int) {}

// Traits implements Transport.
func (p *Plain) Traits() Traits { return Traits{} }

// Arm does nothing.
func (p *Plain) Arm(hup bool) {}

// Read reports ErrUnsupported.
func (p *Plain) Read(b []byte) (int, error) { return 0, ErrUnsupported }

// Write reports ErrUnsupported.
func (p *Plain) Write(b []byte) (int, error) { return 0, ErrUnsupported }

// Flush reports ErrUnsupported.
func (p *Plain) Flush() (bool, error) { return false, ErrUnsupported }

// Reset does nothing.
func Reset(fd int) {}

// RaiseNoFile reports ErrUnsupported.
func RaiseNoFile() (uint64, error) { return 0, ErrUnsupported }

// NoFile returns 0.
func NoFile() uint64 { return 0 }

// Exhausted reports false: nothing is known about local resources here.
func Exhausted(err error) (string, bool) { return "", false }

// IsRemoteAlert reports false.
func IsRemoteAlert(err error) bool { return false }

// IsPlainAnswer reports false.
func IsPlainAnswer(err error) bool { return false }

// IsTimeout reports false.
func IsTimeout(err error) bool { return false }

// TLS is unavailable on this platform.
type TLS struct{ Info TLSInfo }

// UseRaw does nothing.
func (t *TLS) UseRaw(raw Raw) {}

// TLSInfo is what a handshake negotiated.
type TLSInfo = exchange.TLSInfo

// Handshake reports ErrUnsupported.
func Handshake(fd int, cfg *tls.Config, deadline time.Time) (*TLS, error) {
	return nil, ErrUnsupported
}

// ErrHandshakeTimeout is a handshake that did not finish by its deadline.
var ErrHandshakeTimeout = errors.New("TLS handshake timed out")

// Traits implements Transport.
func (t *TLS) Traits() Traits { return Traits{ArmsEachEvent: true, Buffers: true} }

// Arm does nothing.
func (t *TLS) Arm(hup bool) {}

// Read reports ErrUnsupported.
func (t *TLS) Read(b []byte) (int, error) { return 0, ErrUnsupported }

// Write reports ErrUnsupported.
func (t *TLS) Write(b []byte) (int, error) { return 0, ErrUnsupported }

// Flush reports ErrUnsupported.
func (t *TLS) Flush() (pending bool, err error) { return false, ErrUnsupported }
