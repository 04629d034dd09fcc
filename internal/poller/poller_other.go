//go:build !linux && !darwin && !dragonfly && !freebsd

package poller

import "errors"

// ErrUnsupported is returned on platforms without epoll or kqueue support.
var ErrUnsupported = errors.New("poller: this platform has no supported readiness poller")

// Poller is unavailable on this platform.
type Poller struct{}

// New reports ErrUnsupported.
func New() (*Poller, error) { return nil, ErrUnsupported }

// Add reports ErrUnsupported.
func (p *Poller) Add(fd int) error { return ErrUnsupported }

// Wait reports ErrUnsupported.
func (p *Poller) Wait(events []Event, timeoutMs int) (int, error) { return 0, ErrUnsupported }

// WaitNs reports ErrUnsupported.
func (p *Poller) WaitNs(events []Event, timeoutNs int64) (int, error) { return 0, ErrUnsupported }

// Wake reports ErrUnsupported.
func (p *Poller) Wake() error { return ErrUnsupported }

// Close does nothing.
func (p *Poller) Close() error { return nil }
