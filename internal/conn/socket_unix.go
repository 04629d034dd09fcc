//go:build linux || darwin || dragonfly || freebsd

package conn

// socket moves a connection's bytes: system calls on fd, or raw (an
// io_uring's receive completions and batched sends) when set.
type socket struct {
	fd  int
	raw Raw
}

func (s *socket) read(b []byte) (int, error) {
	if s.raw != nil {
		return s.raw.Read(b)
	}
	return rawRead(s.fd, b)
}

func (s *socket) write(b []byte) (int, error) {
	if s.raw != nil {
		return s.raw.Write(b)
	}
	return rawWrite(s.fd, b)
}
